export type LogLevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'
export declare function logLevelOf(line: string): LogLevelName | undefined
export declare function serviceLogFilter(options?: { minimum?: LogLevelName }): (line: string) => boolean
