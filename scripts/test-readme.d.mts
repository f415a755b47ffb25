export interface ReadmeBlock {
  file: string
  code: string
  line: number
  source: string
}
export declare const README_SECTIONS: string[]
export declare const README_MAX_LINES: number
export declare function readmeBlocks(markdown: string, source?: string): ReadmeBlock[]
export declare function readmeShapeProblems(markdown: string): string[]
export declare function onlyExportComponentsProblems(blocks: ReadmeBlock[]): string[]
export declare function readmeInstalls(readme: string): string[][]
export declare function missingInstalls(
  blocks: ReadmeBlock[],
  installs: string[][],
  provided: string[],
): string[]
export declare function providedPackages(): string[]
