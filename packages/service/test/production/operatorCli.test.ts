// What an operator is told and what `start` does with it (issue 36, findings 4 and 13): the sponsor
// key is a secret like the others (a file, an env var, never printed, refused inline in a file
// others can read), `start --json`, `/readyz` and `/metrics` show each sponsor's address and
// balance state, `--help` lists every command, `start` takes the master-key flags the operations
// guide uses, `config check` lists every problem, and `[proxy] otp_length` / `otp_alphabet` set
// the codes' length and characters.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ed25519 } from '@noble/curves/ed25519.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { getAddressDecoder } from '@solana/addresses'
import { completeOtpSignIn, createLatchkey, startOtpSignIn } from 'latchkey/core'
import { addr } from 'micro-eth-signer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testKey } from '../../src/testing/testKeys.ts'
import { type SmtpMailbox, startSmtpMailbox } from '../delivery/smtpMailbox.ts'
import { killAll, runCli, startCli } from './cli.ts'

const APP = 'https://app.example.test'
const dir = mkdtempSync(join(tmpdir(), 'latchkey-operator-'))
const MASTER_KEY = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
const NEXT_MASTER_KEY = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
const SPONSOR_KEY = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
const SOLANA_KEY = bytesToHex(crypto.getRandomValues(new Uint8Array(32)))
const SOLANA_CHAIN = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'
/** What the stub node answers for every sponsor: 0.001 ETH, 5,000 lamports. */
const WEI = 10n ** 15n
const LAMPORTS = 5000
let mailbox: SmtpMailbox
let node: Server
let nodeUrl: string
const asked: string[] = []

function write(name: string, text: string, mode = 0o600): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  chmodSync(path, mode)
  return path
}

beforeAll(async () => {
  mailbox = await startSmtpMailbox()
  // A JSON-RPC node on loopback that knows balances only (EVM and Solana).
  node = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk
    })
    req.on('end', () => {
      const { id, method } = JSON.parse(body) as { id: number; method: string }
      asked.push(method)
      const result =
        method === 'eth_getBalance'
          ? `0x${WEI.toString(16)}`
          : method === 'getBalance'
            ? { context: { slot: 1 }, value: LAMPORTS }
            : null
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }))
    })
  })
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
  nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`
})

afterAll(async () => {
  killAll()
  await mailbox?.close()
  await new Promise((resolve) => node?.close(resolve))
  rmSync(dir, { recursive: true, force: true })
})

/** Nothing printed may hold a key the test knows. */
function expectNoSecrets(text: string): void {
  for (const secret of [MASTER_KEY, NEXT_MASTER_KEY, SPONSOR_KEY, SOLANA_KEY])
    expect(text).not.toContain(secret)
}

const sponsorship = (sponsor: string) => `[sponsorship]
delegates = { "eip155:31337" = "0x00000000000000000000000000000000000000d1" }
low_balance_wei = "10000000000000000"
low_balance_lamports = 1000
caps = { per_organization_per_month_wei = "1000000000000000000", per_organization_per_month_lamports = 1000000000 }
${sponsor}
`

describe('what the operator is told', { timeout: 300_000 }, () => {
  it('--help lists every command', async () => {
    const help = await runCli(['--help'])
    expect(help.code).toBe(0)
    for (const command of [
      'dev',
      'start',
      'init',
      'config check',
      'migrate',
      'backup',
      'restore',
      'rotate-master-key',
      'import',
      'export-users',
    ])
      expect(help.stdout).toContain(`latchkey-service ${command}`)
  })

  it('an inline sponsor key in a file others can read is refused by config check and start, beside every other problem', async () => {
    const file = write(
      'inline.toml',
      `[storage]
data_dir = "${join(dir, 'inline-data')}"

[proxy]
allowed_origins = ["*"]
enabled_methods = ["email"]

${sponsorship(`sponsors.default = { private_key = "${SPONSOR_KEY}" }`)}`,
      0o644,
    )
    const env = { LATCHKEY_MASTER_KEY: MASTER_KEY, LATCHKEY_DATABASE_URL: undefined }
    const [check, start] = await Promise.all([
      runCli(['config', 'check', '--config', file], env),
      runCli(['start', '--config', file], env),
    ])
    for (const run of [check, start]) {
      expect(run.code).toBe(2)
      const lines = run.stderr.trim().split('\n')
      expect(lines).toEqual([
        `latchkey-service: ${file}: sponsorship.sponsors.default.private_key: a secret written in a file every local user can read; move it to private_key_file or LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY, or chmod 600 ${file}`,
        expect.stringMatching(/proxy\.allowed_origins: "\*" lets any web page use the auth proxy/),
        expect.stringMatching(/proxy\.enabled_methods: email needs an SMTP server/),
      ])
      expectNoSecrets(run.stdout + run.stderr)
    }
    // config check still prints the effective configuration, the key redacted, the default budgets in.
    expect(check.stdout).toContain('private_key = "<redacted>"')
    expect(check.stdout).toContain('[rate_limits.per_organization]')
    expect(start.stdout).toBe('')
  })

  it('config check warns of a secret file every local user can read, and still passes', async () => {
    const keyFile = write('readable-master.key', `${MASTER_KEY}\n`, 0o644)
    const file = write(
      'readable.toml',
      `[master_key]\nkey_file = "${keyFile}"\n[storage]\ndata_dir = "${join(dir, 'readable-data')}"\n[proxy]\nallowed_origins = ["${APP}"]\nenabled_methods = ["passkey"]\n`,
    )
    const check = await runCli(['config', 'check', '--config', file], { LATCHKEY_DATABASE_URL: undefined })
    expect(check.code, check.stderr + check.stdout).toBe(0)
    expect(check.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warning: ${file}: master_key\\.key_file: ${keyFile} can be read by every local user \\(mode 644\\): chmod 600 it`,
        ),
      ),
    ])
    expectNoSecrets(check.stdout + check.stderr)
  })

  it('start reads the sponsor keys from a file and an env var and the master keys from flags; --json, /readyz and /metrics show the sponsors; codes have the configured length', async () => {
    write('sponsor.key', `0x${SPONSOR_KEY}\n`)
    const solanaFile = write('sponsor-solana.key', `${SOLANA_KEY}\n`)
    const masterFile = write('master.key', `${MASTER_KEY}\n`)
    const nextFile = write('next.key', `${NEXT_MASTER_KEY}\n`)
    const config = write(
      'latchkey.toml',
      `[server]
host = "127.0.0.1"
port = 0

[storage]
data_dir = "${join(dir, 'data')}"

[proxy]
allowed_origins = ["${APP}"]
enabled_methods = ["email"]
otp_length = 8
otp_alphabet = "alphanumeric"

[email]
host = "127.0.0.1"
port = ${mailbox.port}
tls = "none"
from = "Acme <codes@acme.test>"

[observability]
admin_port = 0

[rpc]
"eip155:31337" = "${nodeUrl}"
"${SOLANA_CHAIN}" = "${nodeUrl}"

${sponsorship('sponsors.default = { private_key_file = "sponsor.key" }')}`,
      0o644,
    )
    const env = {
      LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_SOLANA_PRIVATE_KEY_FILE: solanaFile,
      LATCHKEY_MASTER_KEY: undefined,
      LATCHKEY_DATABASE_URL: undefined,
    }
    const init = await runCli(['init', '--config', config, '--root-public-key', testKey().publicKey], {
      ...env,
      LATCHKEY_MASTER_KEY_FILE: masterFile,
    })
    expect(init.code, init.stderr).toBe(0)
    const ids = JSON.parse(init.stdout)

    const evmAddress = addr.fromPrivateKey(`0x${SPONSOR_KEY}`)
    const solanaAddress = getAddressDecoder().decode(ed25519.getPublicKey(hexToBytes(SOLANA_KEY)))
    const service = await startCli(
      ['start', '--config', config, '--json', '--master-key-file', masterFile],
      env,
    )
    try {
      expect(service.info.sponsors).toEqual([
        { owner: 'default', family: 'eip155', address: evmAddress },
        { owner: 'default', family: 'solana', address: solanaAddress },
      ])
      const admin = service.info.adminUrl as string
      // The first look is taken at start; probes and scrapes read it, never asking the node.
      let ready: { ready: boolean; sponsors: { balance: string | null }[] } | undefined
      for (let i = 0; i < 100; i++) {
        ready = (await (await fetch(`${admin}/readyz`)).json()) as typeof ready
        if (ready!.sponsors.every((sponsor) => sponsor.balance !== null)) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(ready).toMatchObject({
        ready: true,
        sponsors: [
          {
            owner: 'default',
            family: 'eip155',
            caip2: 'eip155:31337',
            address: evmAddress,
            balance: String(WEI),
            low: true,
          },
          {
            owner: 'default',
            family: 'solana',
            caip2: SOLANA_CHAIN,
            address: solanaAddress,
            balance: String(LAMPORTS),
            low: false,
          },
        ],
      })
      // The service's own port, which anyone reaches, does not tell the sponsors' owners or balances.
      const open = (await (await fetch(`${service.info.listening}/readyz`)).json()) as Record<string, unknown>
      expect(open).toMatchObject({ ready: true })
      expect(open.sponsors).toBeUndefined()
      const before = asked.length
      for (let i = 0; i < 5; i++) await fetch(`${admin}/readyz`)
      const metrics = await (await fetch(`${admin}/metrics`)).text()
      expect(asked.length).toBe(before)
      expect(metrics).toContain(
        `latchkey_sponsor_balance{owner="default",family="eip155",caip2="eip155:31337"} ${Number(WEI)}`,
      )
      expect(metrics).toContain(
        `latchkey_sponsor_balance_low{owner="default",family="eip155",caip2="eip155:31337"} 1`,
      )
      expect(metrics).toContain(
        `latchkey_sponsor_balance_low{owner="default",family="solana",caip2="${SOLANA_CHAIN}"} 0`,
      )

      // [proxy] otp_length = 8, otp_alphabet = "alphanumeric": the code mailed has 8 letters and
      // digits though the kit asks for the default, and it signs in typed in lower case.
      const client = createLatchkey({
        baseUrl: service.info.listening,
        authProxyUrl: service.info.listening,
        authProxyConfigId: ids.authProxyConfigId,
        organizationId: ids.organizationId,
        trustedSignerPublicKey: ids.trustedSignerPublicKey,
        fetch: (input, init) => {
          const headers = new Headers(init?.headers)
          headers.set('Origin', APP)
          return globalThis.fetch(input, { ...init, headers })
        },
      })
      const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'ana@acme.test' })
      const [mail] = await mailbox.waitFor(1, 30_000)
      const code = /code is ([0-9A-Za-z]+)\./.exec(mail!.text)?.[1]
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/)
      const { session } = await completeOtpSignIn(client, {
        ...started,
        otpCode: code!.toLowerCase(),
        userName: 'Ana',
      })
      expect(session.organizationId).not.toBe(ids.organizationId)
    } finally {
      expect(await service.stop()).toBe(0)
    }
    expectNoSecrets(service.output().stdout + service.output().stderr + init.stdout + init.stderr)

    // Step 2 of the master-key rotation in docs/operations.md: both keys, as flags.
    const rotating = await startCli(
      [
        'start',
        '--config',
        config,
        '--json',
        '--master-key-file',
        masterFile,
        '--new-master-key-file',
        nextFile,
      ],
      env,
    )
    try {
      expect(rotating.info.organizationId).toBe(ids.organizationId)
    } finally {
      expect(await rotating.stop()).toBe(0)
    }
    // A different key given later is refused, not silently ignored beside the sealed one.
    const other = write('other-sponsor.key', bytesToHex(crypto.getRandomValues(new Uint8Array(32))))
    const mismatch = await runCli(['start', '--config', config, '--master-key-file', masterFile], {
      ...env,
      LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY_FILE: other,
    })
    expect(mismatch.code).toBe(2)
    expect(mismatch.stderr).toContain(
      `sponsorship.sponsors.default.private_key: the database holds the sponsor key of ${evmAddress}`,
    )
    const unknown = await runCli(
      ['start', '--config', config, '--master-key-file', join(dir, 'missing.key')],
      env,
    )
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(`--master-key-file: cannot read ${join(dir, 'missing.key')}: ENOENT`)
  })
})
