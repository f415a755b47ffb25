// Production as an operator runs it: a throwaway PostgreSQL, a real SMTP server on loopback,
// `init`, then two `start` instances on the one database. The kit's `latchkey/core`, in Node,
// signs up by e-mail code through instance A (the code read from the SMTP server's mailbox, never
// from the service) and then makes a wallet and signs with it through instance B.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bytesToHex } from '@noble/hashes/utils.js'
import {
  completeOtpSignIn,
  createLatchkey,
  createWallet,
  signRawPayloads,
  startOtpSignIn,
} from 'latchkey/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testKey } from '../../src/testing/testKeys.ts'
import { codeIn, type SmtpMailbox, startSmtpMailbox } from '../delivery/smtpMailbox.ts'
import { type PostgresCluster, startPostgres } from '../durability/postgres.ts'
import { killAll, runCli, type Started, startCli } from './cli.ts'

const APP = 'https://app.example.test'
const dir = mkdtempSync(join(tmpdir(), 'latchkey-across-'))
const masterKey = bytesToHex(testKey().privateKey)
let cluster: PostgresCluster
let mailbox: SmtpMailbox
const instances: Started[] = []

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()))
  killAll()
  await mailbox?.close()
  await cluster?.dispose()
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

describe('production: sign up on one instance, sign on another', { timeout: 300_000 }, () => {
  let config: string
  beforeAll(async () => {
    ;[cluster, mailbox] = await Promise.all([startPostgres(), startSmtpMailbox()])
    writeFileSync(join(dir, 'master.key'), `${masterKey}\n`, { mode: 0o600 })
    config = join(dir, 'latchkey.toml')
    writeFileSync(
      config,
      `[server]
host = "127.0.0.1"
port = 0

[master_key]
key_file = "master.key"

[proxy]
allowed_origins = ["${APP}"]
enabled_methods = ["email"]
app_name = "Acme"

[email]
host = "127.0.0.1"
port = ${mailbox.port}
tls = "none"
from = "Acme <codes@acme.test>"

[rate_limits.per_organization]
per_second = 1000
`,
      { mode: 0o600 },
    )
  })

  it('init once, two start instances; the kit signs up through A with the mailed code and signs through B', async () => {
    const env = { LATCHKEY_DATABASE_URL: cluster.url }
    const init = await runCli(['init', '--config', config, '--root-public-key', testKey().publicKey], env)
    expect(init.code, init.stderr).toBe(0)
    const ids = JSON.parse(init.stdout)
    for (const _ of ['A', 'B']) instances.push(await startCli(['start', '--config', config, '--json'], env))
    const [a, b] = instances.map((instance) => instance.info.listening as string) as [string, string]
    expect(a).not.toBe(b)

    // Every request goes where `target` says, from the app's origin, as a browser would send it.
    let target = a
    const client = createLatchkey({
      baseUrl: a,
      authProxyUrl: a,
      authProxyConfigId: ids.authProxyConfigId,
      organizationId: ids.organizationId,
      trustedSignerPublicKey: ids.trustedSignerPublicKey,
      fetch: (input, init) => {
        const url = String(input instanceof Request ? input.url : input).replace(a, target)
        const headers = new Headers(init?.headers)
        headers.set('Origin', APP)
        return globalThis.fetch(url, { ...init, headers })
      },
    })
    const email = 'ana@acme.test'
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
    const [mail] = await mailbox.waitFor(1, 30_000)
    expect(mail!.to).toContain(email)
    expect(mail!.subject).toContain('Acme')
    const { session } = await completeOtpSignIn(client, {
      ...started,
      otpCode: codeIn(mail!.text),
      userName: 'Ana',
    })
    expect(session.organizationId).not.toBe(ids.organizationId)

    target = b
    const wallet = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const address = wallet.addresses[0]!
    const { signatures } = await signRawPayloads(client, {
      signWith: address,
      payloads: [`0x${'ab'.repeat(32)}`],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    })
    expect(signatures[0]).toMatchObject({ r: expect.stringMatching(/^[0-9a-f]{64}$/i) })

    // Nothing either instance printed holds the master key or the code.
    for (const instance of instances) {
      const { stdout, stderr } = instance.output()
      expect(stdout + stderr).not.toContain(masterKey)
      expect(stdout + stderr).not.toContain(codeIn(mail!.text))
      expect(stdout + stderr).not.toContain(email)
    }
  })
})
