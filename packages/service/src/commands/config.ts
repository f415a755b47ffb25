// Node only: `latchkey-service config check --config FILE [--json]` validates the operator's
// configuration and prints the effective one (file < env < flags) with every secret redacted;
// `latchkey-service config docs` prints the reference generated from the schema.
import { parseArgs } from 'node:util'
import { CONFIG_EXIT_CODE } from '../config/ConfigError.ts'
import { configurationMarkdown } from '../config/configurationMarkdown.ts'
import { inspectConfig } from '../config/loadConfig.ts'
import { printConfig } from '../config/printConfig.ts'
import { productionRefusals } from '../config/productionRefusals.ts'

const NAME = 'latchkey-service'

export const CONFIG_USAGE = `Usage: latchkey-service config check [--config FILE] [--json]
       latchkey-service config docs

check  validates the configuration start would use (the file, LATCHKEY_* env vars) and prints it
       as TOML (or JSON with --json) with the defaults start applies and every secret redacted;
       lists every problem and exits with 2 if there is one, including each reason start would
       refuse to run.
docs   prints the configuration reference (docs/configuration.md) generated from the schema.

  --config <file>   the TOML file (default: env LATCHKEY_CONFIG)
  --json            print JSON instead of TOML`

/** Writes each problem on its own line and exits with the configuration exit code. */
export function exitWithProblems(problems: string[]): never {
  for (const problem of problems) process.stderr.write(`${NAME}: ${problem}\n`)
  process.exit(CONFIG_EXIT_CODE)
}

export async function run(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv
  if (sub === 'docs' && rest.length === 0) {
    process.stdout.write(configurationMarkdown())
    return
  }
  if (sub !== 'check') {
    if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
      process.stdout.write(`${CONFIG_USAGE}\n`)
      return
    }
    process.stderr.write(`${NAME}: unknown config command ${sub}\n\n${CONFIG_USAGE}\n`)
    process.exit(CONFIG_EXIT_CODE)
  }
  let values: { config?: string | undefined; json?: boolean | undefined; help?: boolean | undefined }
  try {
    values = parseArgs({
      args: rest,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values
  } catch (error) {
    process.stderr.write(`${NAME}: ${(error as Error).message}\n\n${CONFIG_USAGE}\n`)
    process.exit(CONFIG_EXIT_CODE)
  }
  if (values.help) {
    process.stdout.write(`${CONFIG_USAGE}\n`)
    return
  }
  // Every problem at once: the file's, then each reason start would refuse to run (when the
  // configuration could be read at all), so one run of check shows all there is to fix.
  const { loaded, problems, warnings } = inspectConfig({
    file: values.config ?? (process.env.LATCHKEY_CONFIG || undefined),
  })
  if (loaded) process.stdout.write(printConfig(loaded.config, values.json ? 'json' : 'toml'))
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`)
  const refusals = loaded ? productionRefusals(loaded.config) : []
  const all = [...problems, ...refusals.map((refusal) => `start would refuse: ${refusal}`)]
  if (all.length > 0) exitWithProblems(all)
}
