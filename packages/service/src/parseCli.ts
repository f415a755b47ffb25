// Node only: flags of `latchkey dev` (see cli.ts).
import { parseArgs } from 'node:util'
import { SIGN_IN_METHODS, type SignInMethod } from '@latchkey/protocol'

export const USAGE = `Usage: latchkey dev [options]

  --port <n>                 port to listen on; 0 picks a free one (default 8787)
  --host <name>              interface to bind (default 127.0.0.1)
  --data-dir <dir>           keep data durably in <dir> (default: in memory)
  --json                     print one JSON line with URLs and dev credentials first
  --rpc <caip2>=<url>        JSON-RPC node for eth_send_raw_transaction (repeatable)
  --allowed-origins <a,b>    auth-proxy allowed origins (default *)
  --providers <a,b>          enabled sign-in methods (${SIGN_IN_METHODS.join(', ')})
  --session-seconds <n>      auth-proxy session lifetime in seconds
  --rp-id <id>               passkey relying-party id (default localhost)
  --help                     show this help`

export class UsageError extends Error {}

export interface CliOptions {
  port: number
  host: string
  dataDir: string | undefined
  json: boolean
  rpc: Record<string, string>
  allowedOrigins: string[] | undefined
  providers: SignInMethod[] | undefined
  sessionSeconds: string | undefined
  rpId: string | undefined
}

/** Parses the CLI flags; throws UsageError with a clear message on bad input. */
export function parseCli(argv: string[]): CliOptions | 'help' {
  const args = argv[0] === 'dev' ? argv.slice(1) : argv
  let values: Record<string, string | boolean | string[] | undefined>
  try {
    values = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string', default: '8787' },
        host: { type: 'string', default: '127.0.0.1' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean', default: false },
        rpc: { type: 'string', multiple: true },
        'allowed-origins': { type: 'string' },
        providers: { type: 'string' },
        'session-seconds': { type: 'string' },
        'rp-id': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }).values
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  if (values.help) return 'help'
  const port = Number(values.port)
  if (!/^\d+$/.test(String(values.port)) || port > 65535)
    throw new UsageError(`--port must be a number from 0 to 65535, got ${values.port}`)
  const rpc: Record<string, string> = {}
  for (const entry of (values.rpc as string[] | undefined) ?? []) {
    const match = /^([-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32})=(https?:\/\/.+)$/.exec(entry)
    if (!match) throw new UsageError(`--rpc must look like eip155:31337=http://127.0.0.1:8545, got ${entry}`)
    rpc[match[1]!] = match[2]!
  }
  const list = (value: unknown) =>
    typeof value === 'string'
      ? value
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean)
      : undefined
  const providers = list(values.providers)
  const unknown = providers?.find((provider) => !(SIGN_IN_METHODS as readonly string[]).includes(provider))
  if (unknown !== undefined)
    throw new UsageError(
      `--providers: unknown sign-in method ${unknown} (known: ${SIGN_IN_METHODS.join(', ')})`,
    )
  const sessionSeconds = values['session-seconds'] as string | undefined
  if (sessionSeconds !== undefined && (!/^\d+$/.test(sessionSeconds) || Number(sessionSeconds) < 1))
    throw new UsageError(`--session-seconds must be a positive number of seconds, got ${sessionSeconds}`)
  return {
    port,
    host: values.host as string,
    dataDir: values['data-dir'] as string | undefined,
    json: values.json as boolean,
    rpc,
    allowedOrigins: list(values['allowed-origins']),
    providers: providers as SignInMethod[] | undefined,
    sessionSeconds,
    rpId: values['rp-id'] as string | undefined,
  }
}
