export declare function repositoryUrl(): string
export declare function absoluteLinks(
  markdown: string,
  options: {
    file: string
    repository?: string
    ref?: string
    exists?: (path: string) => 'file' | 'dir' | undefined
  },
): string
export declare function prepareReadme(dir: string): void
export declare function restoreReadme(dir: string): void
