export declare const SOLC_VERSION: string
export declare const SETTINGS: Record<string, unknown>
/** Every artifact's text by repository-relative path; nothing is written. */
export declare function compileContracts(): Record<string, string>
