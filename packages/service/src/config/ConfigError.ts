import { ServiceError } from '../kernel/base/errors.ts'
/**
 * A configuration that cannot be used: each problem is one line naming where it is (the file and
 * key path, or the env var or flag) and what is allowed. The CLI prints them and exits with 2.
 */
export class ConfigError extends ServiceError {
  override name = 'ConfigError'
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
  }
}

/** Exit code of a command refused for its configuration or arguments. */
export const CONFIG_EXIT_CODE = 2
