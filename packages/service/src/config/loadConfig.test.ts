import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError } from './ConfigError.ts'
import { inspectConfig, loadConfig, MAX_CONFIG_BYTES } from './loadConfig.ts'
import { printConfig, redactUrlCredentials } from './printConfig.ts'
import { productionRefusals } from './productionRefusals.ts'
import { emailSection } from './sections/email.ts'
import { limitsOptions } from './sections/limits.ts'
import { observabilitySection } from './sections/observability.ts'
import { proxyOptions } from './sections/proxy.ts'
import { sendingOptions, sendingSection } from './sections/sending.ts'
import { smsBudgetOptions, smsSection } from './sections/sms.ts'
import { webauthnOptions } from './sections/webauthn.ts'
import { webhooksSection } from './sections/webhooks.ts'

const FIXTURES = fileURLToPath(new URL('../../test/production/fixtures/', import.meta.url))
const BROKEN = join(FIXTURES, 'broken')
const dir = mkdtempSync(join(tmpdir(), 'latchkey-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const MASTER_KEY = 'a1'.repeat(32)

/** Writes a file in the temp dir (owner-only unless `mode` says otherwise). */
function write(name: string, text: string | Uint8Array, mode = 0o600): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  chmodSync(path, mode)
  return path
}

/** Every problem `config check` would report: load errors, else the refusals of `start`. */
function problemsOf(input: Parameters<typeof loadConfig>[0]): string[] {
  try {
    return productionRefusals(loadConfig({ env: {}, ...input }).config)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

const GOOD = `
[server]
host = "0.0.0.0"
port = 8080
trusted_proxies = ["10.0.0.0/8", "::1"]
public_url = "https://wallet.example.com"

[storage]
data_dir = "/var/lib/latchkey"

[master_key]
key_file = "master.key"

[proxy]
allowed_origins = ["https://app.example.com"]
enabled_methods = ["email", "passkey"]
app_name = "Example"

[rpc]
"eip155:1" = "https://rpc.example.com"

[email]
host = "smtp.example.com"
from = "Example <no-reply@example.com>"
`

describe('loadConfig', () => {
  it('reads a good file, its secret from a file beside it, with no refusal', () => {
    write('master.key', `${MASTER_KEY}\n`)
    const file = write('good.toml', GOOD, 0o644)
    const { config, sources } = loadConfig({ file, env: {} })
    expect(config).toEqual({
      server: {
        host: '0.0.0.0',
        port: 8080,
        trusted_proxies: ['10.0.0.0/8', '::1'],
        forwarded_header: 'x-forwarded-for',
        drain_grace_seconds: 5,
        public_url: 'https://wallet.example.com',
      },
      storage: { data_dir: '/var/lib/latchkey' },
      master_key: { key: MASTER_KEY },
      proxy: {
        allowed_origins: ['https://app.example.com'],
        enabled_methods: ['email', 'passkey'],
        app_name: 'Example',
        session_seconds: 900,
      },
      webauthn: {},
      rpc: { 'eip155:1': 'https://rpc.example.com' },
      sending: sendingSection.parse({}),
      email: emailSection.parse({ host: 'smtp.example.com', from: 'Example <no-reply@example.com>' }),
      observability: observabilitySection.parse({}),
      webhooks: webhooksSection.parse({}),
      limits: { value_only_chains: [] },
    })
    expect(sources.get('master_key.key')).toBe('file master.key')
    expect(productionRefusals(config)).toEqual([])
  })

  it('layers env vars over the file and flags over both', () => {
    const file = write('layers.toml', '[server]\nport = 8080\nhost = "127.0.0.1"\n')
    const { config, sources } = loadConfig({
      file,
      env: {
        LATCHKEY_SERVER_PORT: '9090',
        LATCHKEY_SERVER_HOST: '0.0.0.0',
        LATCHKEY_PROXY_ALLOWED_ORIGINS: 'https://a.example, https://b.example',
        LATCHKEY_MASTER_KEY: MASTER_KEY,
      },
      flags: { 'server.port': '7070' },
    })
    expect(config.server).toMatchObject({ port: 7070, host: '0.0.0.0' })
    expect(config.proxy.allowed_origins).toEqual(['https://a.example', 'https://b.example'])
    expect(config.master_key.key).toBe(MASTER_KEY)
    expect(sources.get('server.port')).toBe('flag --port')
    expect(sources.get('server.host')).toBe('env LATCHKEY_SERVER_HOST')
  })

  it('names the env var or flag a bad value came from', () => {
    expect(problemsOf({ env: { LATCHKEY_SERVER_PORT: 'http' } })).toEqual([
      'LATCHKEY_SERVER_PORT (server.port): must be a whole number from 0 to 65535, got "http"',
    ])
    expect(problemsOf({ flags: { 'server.port': '99999' } })).toEqual([
      '--port (server.port): must be a whole number from 0 to 65535, got 99999',
    ])
  })

  it('reads [limits] value_only_chains into the service options, and names a chain id that is not one', () => {
    const file = write('limits.toml', '[limits]\nvalue_only_chains = ["eip155:7777777"]\n')
    expect(limitsOptions(loadConfig({ file, env: {} }).config.limits)).toEqual({
      valueOnlyChains: ['eip155:7777777'],
    })
    const bad = write('limits-bad.toml', '[limits]\nvalue_only_chains = ["solana:mainnet"]\n')
    expect(problemsOf({ file: bad })).toEqual([
      `${bad}: limits.value_only_chains[0]: must be an EVM CAIP-2 chain id such as 'eip155:7777777', got "solana:mainnet"`,
    ])
  })

  it('reads [proxy] max_session_seconds, refusing one below session_seconds or out of range', () => {
    const file = write('ceiling.toml', '[proxy]\nsession_seconds = 900\nmax_session_seconds = 3600\n')
    const { config } = loadConfig({ file, env: {} })
    expect(proxyOptions(config.proxy)).toMatchObject({
      sessionExpirationSeconds: '900',
      maxSessionExpirationSeconds: '3600',
    })
    // Unset, the stored ceiling stays as it is.
    expect(proxyOptions(loadConfig({ env: {} }).config.proxy)).not.toHaveProperty(
      'maxSessionExpirationSeconds',
    )
    expect(problemsOf({ env: { LATCHKEY_PROXY_MAX_SESSION_SECONDS: '600' } })).toEqual([
      expect.stringMatching(/proxy\.session_seconds: must not be longer than max_session_seconds$/),
    ])
    expect(problemsOf({ env: { LATCHKEY_PROXY_MAX_SESSION_SECONDS: '30' } })).toEqual([
      expect.stringMatching(/max_session_seconds\): must be a whole number of seconds from 60 to 2592000/),
    ])
  })

  it('reads [sending] from the file and env, and names a bad value', () => {
    const file = write('sending.toml', '[sending]\nworker = false\nrpc_timeout_ms = 2000\n')
    const { config } = loadConfig({ file, env: { LATCHKEY_SENDING_MAX_REPLACEMENTS: '5' } })
    expect(sendingOptions(config.sending)).toEqual({
      worker: false,
      pollIntervalMs: 250,
      rpcTimeoutMs: 2000,
      replaceAfterMs: 60_000,
      replacementBumpPercent: 25,
      maxReplacements: 5,
      maxFeePerGasCeiling: '500000000000',
    })
    expect(loadConfig({ env: {} }).config.sending).toMatchObject({ worker: true, rpc_timeout_ms: 10_000 })
    expect(problemsOf({ file: write('sending-bad.toml', '[sending]\nrpc_timeout_ms = 5\n') })).toEqual([
      `${join(dir, 'sending-bad.toml')}: sending.rpc_timeout_ms: must be a whole number of milliseconds from 100 to 120000, got 5`,
    ])
    expect(problemsOf({ env: { LATCHKEY_SENDING_REPLACEMENT_BUMP_PERCENT: '5' } })).toEqual([
      'LATCHKEY_SENDING_REPLACEMENT_BUMP_PERCENT (sending.replacement_bump_percent): must be a whole number of percent from 10 to 1000, got 5',
    ])
    expect(
      problemsOf({ file: write('sending-key.toml', '[sending]\nmax_fee_per_gas_ceiling = "0"\n') }),
    ).toEqual([
      `${join(dir, 'sending-key.toml')}: sending.max_fee_per_gas_ceiling: must be a positive decimal string of wei, e.g. "500000000000", got "0"`,
    ])
  })

  it('reads a secret from <ENV>_FILE', () => {
    const keyFile = write('env.key', MASTER_KEY)
    expect(loadConfig({ env: { LATCHKEY_MASTER_KEY_FILE: keyFile } }).config.master_key.key).toBe(MASTER_KEY)
  })

  const fixtures = readdirSync(BROKEN).filter((name) => name.endsWith('.toml'))
  it.each(fixtures)('catches %s, naming the key', (name) => {
    const file = join(BROKEN, name)
    const expected = /^# expect: (.+)$/m.exec(readFileSync(file, 'utf8'))![1]!
    const problems = problemsOf({ file })
    expect(problems.length).toBeGreaterThan(0)
    expect(problems.join('\n')).toContain(expected)
    for (const problem of problems) expect(problem).not.toMatch(/\n|\s+at .+:\d+:\d+/)
  })

  it('lists every problem of a file at once', () => {
    const file = write('many.toml', '[server]\nport = "x"\nprot = 1\n[proxy]\nallowed_origins = ["nope"]\n')
    expect(problemsOf({ file })).toEqual([
      `${file}: server.port: must be a whole number from 0 to 65535, got "x"`,
      `${file}: server.prot: unknown key (allowed in [server]: host, port, trusted_proxies, forwarded_header, public_url, drain_grace_seconds)`,
      `${file}: proxy.allowed_origins[0]: must be an origin such as https://app.example.com (scheme, host, optional port; no path), got "nope"`,
    ])
  })

  it('refuses a 10 MB file without reading it', () => {
    const file = write('huge.toml', new Uint8Array(10 * 1024 * 1024).fill(0x20))
    expect(problemsOf({ file })).toEqual([
      `${file}: ${file} is 10 MB; at most ${MAX_CONFIG_BYTES / 1024 / 1024} MB is read (is this the right file?)`,
    ])
  })

  it('refuses a file that is not UTF-8, naming the offset', () => {
    const file = write(
      'latin1.toml',
      new Uint8Array([...Buffer.from('[proxy]\napp_name = "Caf'), 0xe9, 0x22, 0x0a]),
    )
    expect(problemsOf({ file })).toEqual([
      `${file}: not UTF-8 text (invalid byte at offset 23); save it as UTF-8`,
    ])
  })

  it('refuses a secret written inline in a world-readable file, and accepts it in an owner-only one', () => {
    const text = `[master_key]\nkey = "${MASTER_KEY}"\n[storage]\ndata_dir = "/var/lib/latchkey"\n[proxy]\nallowed_origins = ["https://app.example.com"]\nenabled_methods = ["passkey"]\n`
    const open = write('inline.toml', text, 0o644)
    const problems = problemsOf({ file: open })
    expect(problems).toEqual([
      `${open}: master_key.key: a secret written in a file every local user can read; move it to key_file or LATCHKEY_MASTER_KEY, or chmod 600 ${open}`,
    ])
    expect(problems.join()).not.toContain(MASTER_KEY)
    expect(problemsOf({ file: write('inline.toml', text, 0o600) })).toEqual([])
  })

  it('never repeats a secret in a message', () => {
    const file = write('badkey.toml', '[master_key]\nkey = "not-hex-secret-value"\n')
    const problems = problemsOf({ file })
    expect(problems).toEqual([`${file}: master_key.key: must be 64 hex characters (32 bytes)`])
  })

  it('prints the effective configuration with secrets redacted, as TOML or JSON', () => {
    const { config } = loadConfig({
      env: { LATCHKEY_MASTER_KEY: MASTER_KEY, LATCHKEY_DATABASE_URL: 'postgres://u:hunter2@db/latchkey' },
    })
    for (const format of ['toml', 'json'] as const) {
      const printed = printConfig(config, format)
      expect(printed).not.toContain(MASTER_KEY)
      expect(printed).not.toContain('hunter2')
      expect(printed).toContain('<redacted>')
    }
    expect(JSON.parse(printConfig(config, 'json')).master_key).toEqual({ key: '<redacted>' })
  })

  it("prints no [rpc] node's credentials or API key", () => {
    const file = write(
      'rpc.toml',
      '[rpc]\n"eip155:1" = "https://user:hunter2@rpc.example:8443/v2/sk_live_42?key=abc"\n"eip155:5" = "http://127.0.0.1:8545"\n',
    )
    const { config } = loadConfig({ file, env: {} })
    for (const format of ['toml', 'json'] as const) {
      const printed = printConfig(config, format)
      for (const secret of ['hunter2', 'user:', 'sk_live_42', 'key=abc'])
        expect(printed).not.toContain(secret)
    }
    expect(JSON.parse(printConfig(config, 'json')).rpc).toEqual({
      'eip155:1': 'https://<redacted>@rpc.example:8443/<redacted>',
      'eip155:5': 'http://127.0.0.1:8545',
    })
  })

  it('prints no credential, query or fragment of any other URL, wherever it is', () => {
    const file = write(
      'urls.toml',
      `[proxy]
allowed_origins = ["https://app.example"]
enabled_methods = ["sms", "google"]

[sms]
provider = "webhook"
url = "https://relay:smspw-9@sms.example/send?token=smsq-9"
secret = "sms-secret-long-enough-1"
max_per_hour = 10

[captcha]
provider = "turnstile"
site_key = "site"
secret = "captcha-secret"
verify_url = "https://captcha.example/siteverify?key=capq-9#frag-9"

[oauth.google]
client_id = "cid"
client_secret = "google-secret"
redirect_uris = ["https://app.example/cb"]
token_endpoint = "https://oauth:tokpw-9@oauth.example/token"
`,
    )
    const { config } = loadConfig({ file, env: { LATCHKEY_MASTER_KEY: MASTER_KEY } })
    for (const format of ['toml', 'json'] as const) {
      const printed = printConfig(config, format)
      for (const secret of ['smspw-9', 'smsq-9', 'capq-9', 'frag-9', 'tokpw-9', 'relay:', 'oauth:'])
        expect(printed, format).not.toContain(secret)
    }
    const printed = JSON.parse(printConfig(config, 'json'))
    expect(printed.sms.url).toBe('https://<redacted>@sms.example/send?<redacted>')
    expect(printed.captcha.verify_url).toBe('https://captcha.example/siteverify?<redacted>#<redacted>')
    expect(printed.oauth.google.token_endpoint).toBe('https://<redacted>@oauth.example/token')
    // A URL without any of them is printed as written.
    expect(printed.proxy.allowed_origins).toEqual(['https://app.example'])
    expect(printed.oauth.google.redirect_uris).toEqual(['https://app.example/cb'])
  })
})

describe('the sponsor keys, secrets like the others', () => {
  const EVM_KEY = 'b2'.repeat(32)
  const SOLANA_KEY = 'c3'.repeat(32)
  const SECTION = `[sponsorship]\ndelegates = { "eip155:31337" = "0x00000000000000000000000000000000000000d1" }\n`

  it('reads private_key_file and solana_private_key_file beside the file, and prints neither key', () => {
    write('sponsor.key', `0x${EVM_KEY}\n`)
    write('sponsor-solana.key', SOLANA_KEY)
    const file = write(
      'sponsor-files.toml',
      `${SECTION}sponsors.default = { private_key_file = "sponsor.key", solana_private_key_file = "sponsor-solana.key" }\n`,
      0o644,
    )
    const { config, sources } = loadConfig({ file, env: {} })
    expect(config.sponsorship?.sponsors).toEqual({
      default: { private_key: `0x${EVM_KEY}`, solana_private_key: SOLANA_KEY },
    })
    expect(sources.get('sponsorship.sponsors.default.private_key')).toBe('file sponsor.key')
    for (const format of ['toml', 'json'] as const) {
      const printed = printConfig(config, format)
      expect(printed).not.toContain(EVM_KEY)
      expect(printed).not.toContain(SOLANA_KEY)
    }
    expect(JSON.parse(printConfig(config, 'json')).sponsorship.sponsors).toEqual({
      default: { private_key: '<redacted>', solana_private_key: '<redacted>' },
    })
  })

  it('reads each sponsor key from LATCHKEY_SPONSORSHIP_SPONSORS_<OWNER>_[SOLANA_]PRIVATE_KEY[_FILE]', () => {
    const file = write('sponsor-env.toml', `${SECTION}[sponsorship.sponsors.org-7]\n`)
    const solanaFile = write('env-solana.key', `${SOLANA_KEY}\n`)
    const { config, sources } = loadConfig({
      file,
      env: {
        LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY: EVM_KEY,
        LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_SOLANA_PRIVATE_KEY_FILE: solanaFile,
        LATCHKEY_SPONSORSHIP_SPONSORS_ORG_7_PRIVATE_KEY: 'd4'.repeat(32),
      },
    })
    expect(config.sponsorship?.sponsors).toEqual({
      default: { private_key: EVM_KEY, solana_private_key: SOLANA_KEY },
      'org-7': { private_key: 'd4'.repeat(32) },
    })
    expect(sources.get('sponsorship.sponsors.default.private_key')).toBe(
      'env LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY',
    )
  })

  it('refuses a sponsor key inline in a file every local user can read, saying where to put it', () => {
    const text = `${SECTION}sponsors.default = { private_key = "${EVM_KEY}", solana_private_key = "${SOLANA_KEY}" }\n`
    const open = write('sponsor-inline.toml', text, 0o644)
    const problems = problemsOf({ file: open })
    expect(problems).toEqual([
      `${open}: sponsorship.sponsors.default.private_key: a secret written in a file every local user can read; move it to private_key_file or LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY, or chmod 600 ${open}`,
      `${open}: sponsorship.sponsors.default.solana_private_key: a secret written in a file every local user can read; move it to solana_private_key_file or LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_SOLANA_PRIVATE_KEY, or chmod 600 ${open}`,
    ])
    expect(problems.join()).not.toContain(EVM_KEY)
    const owner = loadConfig({ file: write('sponsor-inline.toml', text, 0o600), env: {} })
    expect(owner.config.sponsorship?.sponsors.default?.private_key).toBe(EVM_KEY)
  })

  it('lists the keys a sponsor entry takes, and never echoes a malformed key', () => {
    const file = write(
      'sponsor-typo.toml',
      `${SECTION}sponsors.default = { private_key = "0xnot-a-key-but-secret", privat_key_file = "x" }\n`,
    )
    expect(problemsOf({ file })).toEqual([
      `${file}: sponsorship.sponsors.default.private_key: Invalid string: must match pattern /^(0x)?[0-9a-fA-F]{64}$/`,
      `${file}: sponsorship.sponsors.default.privat_key_file: unknown key (allowed in [sponsorship.sponsors.default]: private_key, private_key_file, solana_private_key, solana_private_key_file)`,
    ])
  })
})

describe('start bounds what the sponsor pays in a month', () => {
  const base = `[master_key]\nkey_file = "master.key"\n[storage]\ndata_dir = "/var/lib/latchkey"\n[proxy]\nallowed_origins = ["https://app.example.com"]\nenabled_methods = ["passkey"]\n[rpc]\n"eip155:31337" = "http://127.0.0.1:8545"\n"solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" = "http://127.0.0.1:8899"\n[sponsorship]\ndelegates = { "eip155:31337" = "0x00000000000000000000000000000000000000d1" }\n`
  const check = (name: string, caps: string) => {
    write('master.key', MASTER_KEY)
    return problemsOf({ file: write(name, `${base}${caps}`) })
  }

  it("refuses sponsorship whose caps, or an organization's, leave a chain it pays on without a monthly bound", () => {
    expect(check('uncapped.toml', '')).toEqual([
      expect.stringMatching(
        /^sponsorship\.caps\.per_organization_per_month_wei: sponsored sends on eip155:31337 have no monthly bound/,
      ),
      expect.stringMatching(
        /^sponsorship\.caps\.per_organization_per_month_lamports: sponsored sends on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1 have no monthly bound/,
      ),
    ])
    // A per-user cap alone bounds nothing: anyone who signs up is another end user.
    expect(
      check(
        'per-user.toml',
        '[sponsorship.caps]\nper_user_per_day_wei = "10000000000000000"\nper_organization_per_month_lamports = 1000000000\n[sponsorship.organization_caps.org-7]\nper_organization_per_month = 30000000\n',
      ),
    ).toEqual([
      expect.stringMatching(/^sponsorship\.caps\.per_organization_per_month_wei: /),
      expect.stringMatching(/^sponsorship\.organization_caps\.org-7\.per_organization_per_month_lamports: /),
    ])
    expect(
      check(
        'capped.toml',
        '[sponsorship.caps]\nper_organization_per_month_wei = "1000000000000000000"\nper_organization_per_month_lamports = 1000000000\n',
      ),
    ).toEqual([])
  })
})

describe('start bounds what SMS codes cost', () => {
  const base = `[master_key]\nkey_file = "master.key"\n[storage]\ndata_dir = "/var/lib/latchkey"\n[proxy]\nallowed_origins = ["https://app.example.com"]\nenabled_methods = ["sms", "passkey"]\n[sms]\nprovider = "webhook"\nurl = "https://sms.example.com/hook"\nsecret_file = "sms.secret"\n`
  const check = (name: string, more: string) => {
    write('master.key', MASTER_KEY)
    write('sms.secret', 'a-long-enough-secret')
    return problemsOf({ file: write(name, `${base}${more}`) })
  }

  it('refuses [sms] without max_per_hour, checks the countries, and maps both to the sign-in wing', () => {
    expect(check('sms-unbounded.toml', '')).toEqual([
      expect.stringMatching(/^sms\.max_per_hour: anyone can ask an SMS code for any number they choose/),
    ])
    expect(check('sms-bounded.toml', 'max_per_hour = 200\nallowed_countries = ["US", "GB"]\n')).toEqual([])
    const bad = check('sms-bad.toml', 'max_per_hour = 0\nallowed_countries = ["USA", "gb"]\n')
    expect(bad).toEqual([
      expect.stringMatching(/sms\.max_per_hour: /),
      expect.stringMatching(
        /sms\.allowed_countries\[0\]: sms\.allowed_countries lists ISO 3166-1 alpha-2 codes .*, got "USA"/,
      ),
      expect.stringMatching(/sms\.allowed_countries\[1\]: .*got "gb"/),
    ])
    expect(
      smsBudgetOptions(
        smsSection.parse({
          provider: 'webhook',
          url: 'https://s.example.com',
          secret: 'a-long-enough-secret',
          max_per_hour: 5,
          allowed_countries: ['CA'],
        }),
      ),
    ).toEqual({ maxPerHour: 5, allowedCountries: ['CA'] })
  })

  it("takes the new numbers' share of max_per_hour, and refuses one larger than the whole", () => {
    expect(check('sms-share.toml', 'max_per_hour = 200\nmax_per_hour_new_numbers = 50\n')).toEqual([])
    expect(check('sms-share-over.toml', 'max_per_hour = 200\nmax_per_hour_new_numbers = 201\n')).toEqual([
      expect.stringMatching(
        /sms\.max_per_hour_new_numbers: is a share of sms\.max_per_hour, so at most 200$/,
      ),
    ])
    expect(
      smsBudgetOptions(
        smsSection.parse({
          provider: 'webhook',
          url: 'https://s.example.com',
          secret: 'a-long-enough-secret',
          max_per_hour: 5,
          max_per_hour_new_numbers: 1,
        }),
      ),
    ).toEqual({ maxPerHour: 5, maxPerHourNewNumbers: 1 })
  })
})

describe('a secret file every local user can read', () => {
  it('is read, with a warning naming it, its mode and what to do; an owner-only one gives none', () => {
    const loose = write('loose-master.key', `${MASTER_KEY}\n`, 0o644)
    const shared = write('shared-sponsor.key', `${'b2'.repeat(32)}\n`, 0o444)
    const tight = write('tight-sponsor.key', `${'c3'.repeat(32)}\n`, 0o400)
    const file = write(
      'warned.toml',
      `[sponsorship]\ndelegates = { "eip155:31337" = "0x00000000000000000000000000000000000000d1" }\nsponsors.default = { private_key_file = "${shared}", solana_private_key_file = "${tight}" }\n`,
    )
    const { loaded, problems, warnings } = inspectConfig({
      file,
      env: {},
      flags: { 'master_key.key_file': loose },
    })
    expect(problems).toEqual([])
    expect(loaded!.config.master_key.key).toBe(MASTER_KEY)
    expect(warnings).toEqual([
      `${file}: sponsorship.sponsors.default.private_key_file: ${shared} can be read by every local user (mode 444): chmod 600 it, owned by the service's user (a container's mounted secret, readable only inside it, may stay as it is)`,
      expect.stringMatching(
        new RegExp(`^--master-key-file: ${loose} can be read by every local user \\(mode 644\\)`),
      ),
    ])
    const { warnings: none } = inspectConfig({ env: { LATCHKEY_MASTER_KEY_FILE: tight } })
    expect(none).toEqual([])
  })
})

describe('config check and start list every problem', () => {
  it('an inline secret does not hide the refusals: three problems, three lines', () => {
    const file = write(
      'three.toml',
      `[master_key]\nkey = "${MASTER_KEY}"\n[storage]\ndata_dir = "/var/lib/latchkey"\n[proxy]\nallowed_origins = ["*"]\nenabled_methods = ["email", "passkey"]\n`,
      0o644,
    )
    const { loaded, problems } = inspectConfig({ file, env: {} })
    expect(loaded).toBeDefined()
    expect([...problems, ...productionRefusals(loaded!.config)]).toEqual([
      expect.stringMatching(/master_key\.key: a secret written in a file every local user can read/),
      expect.stringMatching(/^proxy\.allowed_origins: "\*" lets any web page/),
      expect.stringMatching(/^proxy\.enabled_methods: email needs an SMTP server/),
    ])
  })

  it('prints the [rate_limits] start applies when the file sets none', () => {
    const { config } = loadConfig({ env: {} })
    expect(JSON.parse(printConfig(config, 'json')).rate_limits).toEqual({
      per_organization: { per_second: 10, burst: 20 },
      per_client_address: { per_second: 10, burst: 40 },
    })
    expect(printConfig(config, 'toml')).toContain('[rate_limits.per_organization]')
    const set = loadConfig({ env: { LATCHKEY_RATE_LIMITS_PER_KEY_PER_SECOND: '5' } }).config
    // start keeps its per-client-address budget when the section sets only others
    expect(JSON.parse(printConfig(set, 'json')).rate_limits).toEqual({
      per_key: { per_second: 5 },
      per_client_address: { per_second: 10, burst: 40 },
    })
  })

  it('reads the master keys from the --master-key-file and --new-master-key-file flags', () => {
    const current = write('flag-current.key', `${MASTER_KEY}\n`)
    const next = write('flag-next.key', 'b1'.repeat(32))
    const { config, sources } = loadConfig({
      env: {},
      flags: { 'master_key.key_file': current, 'master_key.next_key_file': next },
    })
    expect(config.master_key).toEqual({ key: MASTER_KEY, next_key: 'b1'.repeat(32) })
    expect(sources.get('master_key.key')).toBe('flag --master-key-file')
    expect(problemsOf({ flags: { 'master_key.key_file': join(dir, 'missing.key') } })).toEqual([
      `--master-key-file: cannot read ${join(dir, 'missing.key')}: ENOENT`,
    ])
  })
})

describe('a URL spelled without // after its scheme, which WHATWG URL reads as one', () => {
  const oauth = (tokenEndpoint: string) => `[proxy]
allowed_origins = ["https://app.example"]
enabled_methods = ["google"]

[oauth.google]
client_id = "cid"
client_secret = "google-secret"
redirect_uris = ["https://app.example/cb"]
token_endpoint = ${JSON.stringify(tokenEndpoint)}
`
  for (const [i, url] of [
    'https:oauth:tokpw-9@oauth.example/token?q=tokq-9#tokf-9',
    'https:\\\\oauth:tokpw-9@oauth.example/token?q=tokq-9#tokf-9',
    'https:/oauth:tokpw-9@oauth.example/token?q=tokq-9#tokf-9',
  ].entries())
    it(`${JSON.stringify(url)}: used with its password, printed rebuilt without it`, () => {
      const file = write(`noslash-${i}.toml`, oauth(url))
      const { config } = loadConfig({ file, env: { LATCHKEY_MASTER_KEY: MASTER_KEY } })
      const used = (config as unknown as { oauth: { google: { token_endpoint: string } } }).oauth.google
        .token_endpoint
      expect(new URL(used).password).toBe('tokpw-9')
      for (const format of ['toml', 'json'] as const)
        for (const secret of ['tokpw-9', 'tokq-9', 'tokf-9', 'oauth:'])
          expect(printConfig(config, format), format).not.toContain(secret)
      expect(JSON.parse(printConfig(config, 'json')).oauth.google.token_endpoint).toBe(
        'https://<redacted>@oauth.example/token?<redacted>#<redacted>',
      )
    })
})

describe('redactUrlCredentials: any value that starts with a scheme and parses', () => {
  it('is rebuilt from what the parser read; a value with nothing to hide is kept as written', () => {
    for (const [text, shown] of [
      [' ht\ttps:u:pw-1@h.example/x', 'https://<redacted>@h.example/x'],
      ['https:/u:pw-1@h.example', 'https://<redacted>@h.example/'],
      ['file:///etc/x?t=tok-1', 'file:///etc/x?<redacted>'],
      ['mailto:ops@example.com?subject=tok-1', 'mailto:ops@example.com?<redacted>'],
      ['redis://:pw-1@cache:6379', 'redis://<redacted>@cache:6379'],
      ['https://u:pw-1@bad host/x', 'https://<redacted>'],
      ['https:app.example/cb', 'https:app.example/cb'],
      ['Example <no-reply@example.com>', 'Example <no-reply@example.com>'],
    ])
      expect(redactUrlCredentials(text as string), text).toBe(shown)
  })
})

describe('a refused configuration quoting the value it refuses', () => {
  it("an [rpc] node given as the provider's wss:// URL: the refusal shows it as redactUrl does", () => {
    const key = 'alchemyKey-0f9e8d7c6b5a'
    const file = write('wss.toml', `[rpc]\n"eip155:1" = "wss://eth-mainnet.g.alchemy.com/v2/${key}"\n`)
    const problems = problemsOf({ file, env: { LATCHKEY_MASTER_KEY: MASTER_KEY } })
    const problem = problems.find((line) => line.includes('rpc.'))
    expect(problem).toMatch(
      /must be an http\(s\) URL.*, got "wss:\/\/eth-mainnet\.g\.alchemy\.com\/<redacted>"$/,
    )
    for (const line of problems) expect(line).not.toContain(key)
  })

  it('sms.url with a password and a token, refused (not http(s)): shown without them', () => {
    const file = write(
      'ftp.toml',
      `[proxy]
allowed_origins = ["https://app.example"]
enabled_methods = ["sms"]

[sms]
provider = "webhook"
url = "ftp://relay:smspw-9@sms.example/send?token=smsq-9"
secret = "sms-secret-long-enough-1"
max_per_hour = 10
`,
    )
    const problems = problemsOf({ file, env: { LATCHKEY_MASTER_KEY: MASTER_KEY } })
    expect(problems.find((line) => line.includes('sms.url'))).toMatch(
      /, got "ftp:\/\/<redacted>@sms\.example\/send\?<redacted>"$/,
    )
    for (const line of problems)
      for (const secret of ['smspw-9', 'smsq-9']) expect(line).not.toContain(secret)
  })

  it('a long URL is redacted before it is cut: no part of its credentials is left', () => {
    const file = write(
      'longsms.toml',
      `[proxy]
allowed_origins = ["https://app.example"]
enabled_methods = ["sms"]

[sms]
provider = "webhook"
url = "ftp://relay:smspw-9@sms.example/${'p'.repeat(90)}?token=smsq-9"
secret = "sms-secret-long-enough-1"
max_per_hour = 10
`,
    )
    for (const line of problemsOf({ file, env: { LATCHKEY_MASTER_KEY: MASTER_KEY } }))
      for (const secret of ['smspw', 'relay:']) expect(line).not.toContain(secret)
  })

  it('sms.url mistyped with a password in it (no scheme, //, <…>, quoted): named, not quoted', () => {
    const password = 'smsPassw0rd-77'
    for (const [i, url] of [
      `relay:${password}@sms.example/send`,
      `//relay:${password}@sms.example/send`,
      `<https://relay:${password}@sms.example/send>`,
      `'https://relay:${password}@sms.example/send'`,
      `sms.example/send?token=${password}`,
      `sms.example/send#${password}`,
    ].entries()) {
      const file = write(
        `mistyped-${i}.toml`,
        `[proxy]
allowed_origins = ["https://app.example"]
enabled_methods = ["sms"]

[sms]
provider = "webhook"
url = ${JSON.stringify(url)}
secret = "sms-secret-long-enough-1"
max_per_hour = 10
`,
      )
      const problems = problemsOf({ file, env: { LATCHKEY_MASTER_KEY: MASTER_KEY } })
      expect(
        problems.find((line) => line.includes('sms.url')),
        url,
      ).toMatch(/sms\.url: .* \(the value is not shown: it may hold a credential\)$/)
      for (const line of problems) expect(line, url).not.toContain(password)
    }
  })
})

describe('the origins a passkey is accepted from', () => {
  // The runtime reads no `origins` as "any origin" (the dev service's behaviour).
  const withWebauthn = (webauthn: string) =>
    write('webauthn.toml', `${GOOD.replace('[proxy]', `[webauthn]\n${webauthn}\n[proxy]`)}`)

  it('an empty [webauthn] origins list is refused naming the key, in the file or in the env var', () => {
    write('master.key', `${MASTER_KEY}\n`)
    expect(problemsOf({ file: withWebauthn('origins = []') })).toEqual([
      expect.stringMatching(/webauthn\.origins.*must list at least one origin/),
    ])
    expect(problemsOf({ file: withWebauthn(''), env: { LATCHKEY_WEBAUTHN_ORIGINS: ',' } })).toEqual([
      expect.stringMatching(/LATCHKEY_WEBAUTHN_ORIGINS \(webauthn\.origins\).*must list at least one origin/),
    ])
    // One origin is accepted, and is what the runtime gets.
    const { config } = loadConfig({
      file: withWebauthn('origins = ["https://app.example.com:8443"]'),
      env: {},
    })
    expect(productionRefusals(config)).toEqual([])
    expect(
      webauthnOptions(config.webauthn, { allowedOrigins: config.proxy.allowed_origins }).origins,
    ).toEqual(['https://app.example.com:8443'])
  })

  it('falls back to proxy.allowed_origins when unset or empty; start refuses when no origin is left', () => {
    const fallback = { allowedOrigins: ['https://app.example.com'] }
    expect(webauthnOptions({}, fallback).origins).toEqual(['https://app.example.com'])
    expect(webauthnOptions({ origins: [] }, fallback).origins).toEqual(['https://app.example.com'])
    expect(webauthnOptions({ origins: [] }, { allowedOrigins: ['*'] }).origins).toBeUndefined()
    write('master.key', `${MASTER_KEY}\n`)
    const { config } = loadConfig({ file: withWebauthn(''), env: {} })
    // A Config built past the schema (an empty proxy.allowed_origins, which the proxy's own
    // refusal lets through): refused naming webauthn.origins.
    const refusedFor = (proxy: typeof config.proxy, webauthn: typeof config.webauthn = {}) =>
      productionRefusals({ ...config, proxy, webauthn }).filter((line) =>
        /^(webauthn|proxy\.allowed)/.test(line),
      )
    const noOrigin = expect.stringMatching(
      /^webauthn\.origins: no origin is left to accept in passkey client data/,
    )
    expect(refusedFor({ ...config.proxy, allowed_origins: [] })).toEqual([noOrigin])
    expect(refusedFor({ ...config.proxy, allowed_origins: [] }, { origins: [] })).toEqual([noOrigin])
    // Where proxy.allowed_origins is refused (unset, "*"), its one line says to list the apps there.
    expect(refusedFor({ ...config.proxy, allowed_origins: ['*'] })).toEqual([
      expect.stringMatching(/^proxy\.allowed_origins: "\*"/),
    ])
    // Set in [webauthn], the passkey origins need no proxy.allowed_origins.
    expect(
      refusedFor({ ...config.proxy, allowed_origins: [] }, { origins: ['https://app.example.com'] }),
    ).toEqual([])
  })
})
