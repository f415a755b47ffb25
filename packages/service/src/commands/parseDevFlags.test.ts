import { type ChildProcess, spawn } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type PostgresCluster, startPostgres } from '../../test/durability/postgres.ts'
import { cliCommand } from '../../test/support/cliEntry.ts'
import {
  detectEnvPrefixes,
  envVariables,
  mergeEnvFile,
  parseCli,
  prepareDataDir,
  USAGE,
  UsageError,
  writeEnvFile,
} from './parseDevFlags.ts'

describe('parseCli', () => {
  it('reads every flag after the dev command (flags alone still mean dev)', () => {
    const argv = [
      'dev',
      '--port',
      '0',
      '--data-dir',
      '.latchkey',
      '--json',
      '--rpc',
      'eip155:31337=http://127.0.0.1:8545',
      '--rpc',
      'eip155:1=https://rpc.example',
      '--allowed-origins',
      'http://a.test, http://b.test',
      '--providers',
      'email,sms,passkey',
      '--session-seconds',
      '600',
      '--rp-id',
      'example.test',
      '--admin-port',
      '9464',
      '--admin-host',
      '0.0.0.0',
      '--log-format',
      'json',
      '--log-level',
      'warn',
      '--drain-seconds',
      '5',
    ]
    expect(parseCli(argv)).toEqual({
      port: 0,
      host: '127.0.0.1',
      dataDir: '.latchkey',
      envFile: undefined,
      envPrefixes: undefined,
      evmPort: undefined,
      fund: [],
      json: true,
      rpc: { 'eip155:31337': 'http://127.0.0.1:8545', 'eip155:1': 'https://rpc.example' },
      sponsor: {},
      evmSponsor: false,
      solanaPort: undefined,
      solanaSponsor: false,
      sponsorship: undefined,
      allowedOrigins: ['http://a.test', 'http://b.test'],
      providers: ['email', 'sms', 'passkey'],
      sessionSeconds: '600',
      rpId: 'example.test',
      adminPort: 9464,
      adminHost: '0.0.0.0',
      logFormat: 'json',
      logLevel: 'warn',
      drainSeconds: 5,
      drainGraceSeconds: 0.5,
      noMigrate: false,
      skipIntegrityCheck: false,
      newMasterKeyFile: undefined,
    })
    expect(parseCli(['dev'])).toMatchObject({
      port: 8787,
      json: false,
      dataDir: undefined,
      rpc: {},
      adminPort: undefined,
      adminHost: '127.0.0.1',
      logFormat: 'pretty',
      logLevel: 'info',
      drainSeconds: 20,
      drainGraceSeconds: 0.5,
    })
    expect(parseCli(['dev', '--no-migrate'])).toMatchObject({ noMigrate: true })
    expect(parseCli(['--port', '0'])).toMatchObject({ port: 0 })
  })

  it('prints help for the bare command and --help, the version for --version', () => {
    expect(parseCli([])).toBe('help')
    expect(parseCli(['--help'])).toBe('help')
    expect(parseCli(['dev', '--help'])).toBe('help')
    expect(parseCli(['help'])).toBe('help')
    expect(parseCli(['--version'])).toBe('version')
    expect(parseCli(['dev', '-v'])).toBe('version')
    expect(USAGE).toMatch(/http:\/\/127\.0\.0\.1:8787\/dev\/outbox/)
    expect(USAGE).toMatch(/--env <file>/)
  })

  it('binds loopback addresses only', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1'])
      expect(parseCli(['dev', '--host', host])).toMatchObject({ host })
  })

  it('--env implies the .latchkey data dir unless --data-dir is given', () => {
    expect(parseCli(['dev', '--env', '.env.local'])).toMatchObject({
      envFile: '.env.local',
      dataDir: '.latchkey',
    })
    expect(parseCli(['dev', '--env', '.env', '--data-dir', 'data'])).toMatchObject({ dataDir: 'data' })
  })

  it.each([
    [['dev', '--port', '70000'], /--port must be a number from 0 to 65535, got 70000/],
    [['dev', '--port', '-1'], /--port must be a number from 0 to 65535, got -1/],
    [['dev', '--session-seconds', '-5'], /--session-seconds must be a positive number of seconds, got -5/],
    [['dev', '--rpc', 'mainnet'], /--rpc must look like/],
    [['dev', '--providers', 'email,telepathy'], /unknown sign-in method telepathy/],
    [['dev', '--session-seconds', '0'], /--session-seconds must be/],
    [['dev', '--env', ''], /--env needs a file name/],
    [['dev', '--admin-port', '-1'], /--admin-port must be a number from 0 to 65535, got -1/],
    [['dev', '--log-format', 'xml'], /--log-format must be json or pretty, got xml/],
    [['dev', '--log-level', 'loud'], /--log-level must be one of debug, info, warn, error, silent, got loud/],
    [['dev', '--drain-seconds', 'soon'], /--drain-seconds must be a number of seconds/],
    [['dev', '--colour'], /Unknown option/],
    [['dev', 'extra'], /Unexpected argument/],
    [['serve'], /unknown command serve/],
    [
      ['dev', '--host', '0.0.0.0'],
      /--host 0\.0\.0\.0: dev serves this machine only .* use latchkey-service start/,
    ],
    [['dev', '--host', '192.168.1.10'], /binds a loopback address/],
    [['dev', '--host', '::'], /binds a loopback address/],
  ])('explains %j', (argv, message) => {
    expect(() => parseCli(argv as string[])).toThrow(message)
  })

  it("--rpc refused: the URL shown as a refused [rpc] value is, the provider's key and password left out", () => {
    const key = 'alchemyKey-0f9e8d7c6b5a'
    for (const [value, shown] of [
      [
        `eip155:1=wss://eth-mainnet.g.alchemy.com/v2/${key}`,
        'eip155:1=wss://eth-mainnet.g.alchemy.com/<redacted>',
      ],
      [`eip155:1=htps://relay:${key}@eth.example/rpc`, 'eip155:1=htps://<redacted>@eth.example/<redacted>'],
      [`eip155:1=eth.example/rpc?key=${key}`, 'eip155:1=<redacted>'],
      [`wss://eth-mainnet.g.alchemy.com/v2/${key}`, 'wss://eth-mainnet.g.alchemy.com/<redacted>'],
      ['mainnet', 'mainnet'],
    ]) {
      const message = (() => {
        try {
          parseCli(['dev', '--rpc', value!])
        } catch (error) {
          expect(error).toBeInstanceOf(UsageError)
          return (error as Error).message
        }
        throw new Error(`${value} was accepted`)
      })()
      expect(message, value).toBe(`--rpc must look like eip155:31337=http://127.0.0.1:8545, got ${shown}`)
      expect(message).not.toContain(key)
    }
  })
})

const ids = {
  baseUrl: 'http://127.0.0.1:8787',
  authProxyUrl: 'http://127.0.0.1:8787',
  authProxyConfigId: 'config-1',
  organizationId: 'org-1',
  trustedSignerPublicKey: '04ab',
}

describe('--evm, --fund and --env-prefix', () => {
  const address = '0x5555555555555555555555555555555555555555'
  it('starts a node on 8545 by default, or the port given, and funds accounts (100 ETH by default)', () => {
    expect(parseCli(['dev', '--evm'])).toMatchObject({ evmPort: 8545, fund: [] })
    expect(parseCli(['dev'])).toMatchObject({ evmPort: undefined })
    expect(
      parseCli([
        'dev',
        '--evm',
        '--evm-port',
        '0',
        '--fund',
        address,
        '--fund',
        `${address.toUpperCase().replace('0X', '0x')}=0.5`,
      ]),
    ).toMatchObject({
      evmPort: 0,
      fund: [
        { address, wei: 100n * 10n ** 18n },
        { address: address.toUpperCase().replace('0X', '0x'), wei: 5n * 10n ** 17n },
      ],
    })
  })

  it('refuses what cannot work, saying why', () => {
    expect(() => parseCli(['dev', '--fund', address])).toThrow(/--fund needs --evm/)
    expect(() => parseCli(['dev', '--evm-port', '9545'])).toThrow(/--evm-port needs --evm/)
    expect(() => parseCli(['dev', '--evm', '--evm-port', '70000'])).toThrow(/--evm-port must be a number/)
    expect(() => parseCli(['dev', '--evm', '--fund', '0x12'])).toThrow(/--fund must look like 0x/)
    expect(() => parseCli(['dev', '--evm', '--fund', `${address}=lots`])).toThrow(/--fund must look like/)
    expect(() => parseCli(['dev', '--evm', '--rpc', 'eip155:31337=http://127.0.0.1:9545'])).toThrow(
      /--evm runs the node of eip155:31337/,
    )
    expect(() => parseCli(['dev', '--rpc-timeout-ms', '50'])).toThrow(
      /--rpc-timeout-ms must be a whole number of milliseconds from 100 to 120000, got 50/,
    )
    expect(() => parseCli(['dev', '--rpc-timeout-ms', '1.5'])).toThrow(
      /--rpc-timeout-ms must be a whole number/,
    )
    expect(parseCli(['dev', '--rpc-timeout-ms', '1000'])).toMatchObject({ rpcTimeoutMs: 1000 })
    expect(parseCli(['dev'])).toMatchObject({ rpcTimeoutMs: undefined })
    expect(() => parseCli(['dev', '--env-prefix', 'VITE_'])).toThrow(/--env-prefix needs --env/)
    expect(() => parseCli(['dev', '--env', '.env', '--env-prefix', 'REACT_APP_'])).toThrow(
      /--env-prefix must be VITE_, NEXT_PUBLIC_ or both, got REACT_APP_/,
    )
    expect(parseCli(['dev', '--env', '.env', '--env-prefix', 'NEXT_PUBLIC_,VITE_'])).toMatchObject({
      envPrefixes: ['NEXT_PUBLIC_', 'VITE_'],
    })
  })
})

describe('sponsorship in dev', () => {
  const delegate = '0x1111111111111111111111111111111111111111'
  const dirs: string[] = []
  const sponsorshipFile = (text: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-sponsorship-'))
    dirs.push(dir)
    const file = join(dir, 'latchkey.toml')
    writeFileSync(file, text)
    return file
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('sponsors the --evm chain by default, unless --no-sponsor or a --sponsor of its own', () => {
    expect(parseCli(['dev', '--evm'])).toMatchObject({ evmSponsor: true, sponsor: {} })
    expect(parseCli(['dev', '--evm', '--no-sponsor'])).toMatchObject({ evmSponsor: false })
    // The node --evm starts is the chain's RPC: no --rpc needed for its delegate.
    expect(parseCli(['dev', '--evm', '--sponsor', `eip155:31337=${delegate}`])).toMatchObject({
      evmSponsor: false,
      sponsor: { 'eip155:31337': delegate },
    })
    expect(parseCli(['dev'])).toMatchObject({ evmSponsor: false })
    expect(() => parseCli(['dev', '--no-sponsor'])).toThrow(/--no-sponsor needs --evm or --solana/)
    expect(() => parseCli(['dev', '--evm', '--no-sponsor', '--sponsor', `eip155:31337=${delegate}`])).toThrow(
      /contradict/,
    )
    expect(() => parseCli(['dev', '--sponsor', `eip155:1=${delegate}`])).toThrow(/needs --rpc eip155:1=<url>/)
  })

  it('starts a Solana node on 8899 by default, or the port given, sponsored unless --no-sponsor', () => {
    expect(parseCli(['dev', '--solana'])).toMatchObject({ solanaPort: 8899, solanaSponsor: true })
    expect(parseCli(['dev', '--solana', '--solana-port', '0'])).toMatchObject({ solanaPort: 0 })
    expect(parseCli(['dev', '--solana', '--no-sponsor'])).toMatchObject({ solanaSponsor: false })
    expect(parseCli(['dev', '--evm', '--solana', '--no-sponsor'])).toMatchObject({
      evmSponsor: false,
      solanaSponsor: false,
    })
    expect(parseCli(['dev'])).toMatchObject({ solanaPort: undefined, solanaSponsor: false })
    expect(() => parseCli(['dev', '--solana-port', '9000'])).toThrow(/--solana-port needs --solana/)
    expect(() => parseCli(['dev', '--solana', '--solana-port', '-1'])).toThrow(
      /--solana-port must be a number from 0 to 65535, got -1/,
    )
    expect(() => parseCli(['dev', '--solana', '--evm', '--solana-port', '8545'])).toThrow(
      /--solana-port and --evm-port are both 8545/,
    )
  })

  it('reads [sponsorship] from a TOML file (env LATCHKEY_SPONSORSHIP_FILE), --sponsor-cap over its caps', () => {
    const file = sponsorshipFile(
      '[server]\nport = 1\n\n[sponsorship.caps]\nper_transaction = 400000\nper_user_per_day_wei = "5000"\n\n[sponsorship.organization_caps.org-1]\nper_transaction = 100000\n',
    )
    const fromFile = parseCli(['dev', '--sponsorship', file, '--sponsor-cap', 'per_user_per_day_wei=7000'])
    expect(fromFile).toMatchObject({
      sponsorship: {
        delegates: {},
        caps: { perTransaction: 400000, perUserPerDayWei: '7000' },
        organizationCaps: { 'org-1': { perTransaction: 100000 } },
      },
    })
    expect(parseCli(['dev'], { LATCHKEY_SPONSORSHIP_FILE: file })).toMatchObject({
      sponsorship: { caps: { perUserPerDayWei: '5000' } },
    })
    expect(parseCli(['dev', '--sponsor-cap', 'max_fee_per_gas=2000000000'])).toMatchObject({
      sponsorship: { caps: { maxFeePerGas: '2000000000' } },
    })
  })

  it('names the key and the problem of a wrong [sponsorship]', () => {
    expect(() => parseCli(['dev', '--sponsor-cap', 'per_transaction=lots'])).toThrow(
      /--sponsor-cap must look like/,
    )
    expect(() => parseCli(['dev', '--sponsor-cap', 'per_day=5'])).toThrow(/^sponsorship\.caps/)
    expect(() =>
      parseCli(['dev', '--sponsorship', sponsorshipFile('[sponsorship]\nbalance_check_seconds = 1\n')]),
    ).toThrow(/sponsorship\.balance_check_seconds/)
    expect(() => parseCli(['dev', '--sponsorship', sponsorshipFile('[sponsorship\n')])).toThrow(/not TOML/)
    expect(() => parseCli(['dev', '--sponsorship', '/nonexistent/latchkey.toml'])).toThrow(/ENOENT/)
  })
})

describe('the --env file', () => {
  it('names each id once per framework, under the config field names, and never the API key', () => {
    const variables = envVariables(ids)
    expect(variables).toEqual({
      VITE_LATCHKEY_AUTH_PROXY_URL: 'http://127.0.0.1:8787',
      VITE_LATCHKEY_BASE_URL: 'http://127.0.0.1:8787',
      VITE_LATCHKEY_AUTH_PROXY_CONFIG_ID: 'config-1',
      VITE_LATCHKEY_ORGANIZATION_ID: 'org-1',
      VITE_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY: '04ab',
      NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_URL: 'http://127.0.0.1:8787',
      NEXT_PUBLIC_LATCHKEY_BASE_URL: 'http://127.0.0.1:8787',
      NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_CONFIG_ID: 'config-1',
      NEXT_PUBLIC_LATCHKEY_ORGANIZATION_ID: 'org-1',
      NEXT_PUBLIC_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY: '04ab',
    })
  })

  it('adds the outbox and the --evm node when given (empty without a node)', () => {
    expect(
      envVariables(ids, ['VITE_'], {
        outboxUrl: 'http://127.0.0.1:8787/dev/outbox',
        rpcUrl: 'http://127.0.0.1:8545',
      }),
    ).toMatchObject({
      VITE_LATCHKEY_OUTBOX_URL: 'http://127.0.0.1:8787/dev/outbox',
      VITE_LATCHKEY_RPC_URL: 'http://127.0.0.1:8545',
    })
    expect(
      envVariables(ids, ['NEXT_PUBLIC_'], { outboxUrl: 'http://127.0.0.1:8787/dev/outbox' }),
    ).toMatchObject({
      NEXT_PUBLIC_LATCHKEY_RPC_URL: '',
    })
    // The --solana node's variables are written only with --solana.
    expect(
      Object.keys(envVariables(ids, ['VITE_'], { outboxUrl: 'http://o' })).filter((n) =>
        n.includes('SOLANA'),
      ),
    ).toEqual([])
    expect(
      envVariables(ids, ['VITE_'], {
        outboxUrl: 'http://o',
        solana: { rpcUrl: 'http://127.0.0.1:8899', caip2: 'solana:abc', sponsorAddress: 'Sp0nsor' },
      }),
    ).toMatchObject({
      VITE_LATCHKEY_SOLANA_RPC_URL: 'http://127.0.0.1:8899',
      VITE_LATCHKEY_SOLANA_CAIP2: 'solana:abc',
      VITE_LATCHKEY_SOLANA_SPONSOR_ADDRESS: 'Sp0nsor',
    })
  })

  it('names only the prefixes asked for', () => {
    expect(Object.keys(envVariables(ids, ['VITE_']))).toEqual([
      'VITE_LATCHKEY_AUTH_PROXY_URL',
      'VITE_LATCHKEY_BASE_URL',
      'VITE_LATCHKEY_AUTH_PROXY_CONFIG_ID',
      'VITE_LATCHKEY_ORGANIZATION_ID',
      'VITE_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY',
    ])
  })

  it("detects the app's framework from the package.json next to the file", () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-prefix-'))
    try {
      const file = join(dir, '.env.local')
      expect(detectEnvPrefixes(file)).toEqual(['VITE_', 'NEXT_PUBLIC_'])
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ devDependencies: { vite: '^7.0.0' } }))
      expect(detectEnvPrefixes(file)).toEqual(['VITE_'])
      writeFileSync(
        join(dir, 'package.json'),
        JSON.stringify({ dependencies: { next: '16.0.0', react: '19' } }),
      )
      expect(detectEnvPrefixes(file)).toEqual(['NEXT_PUBLIC_'])
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { express: '5' } }))
      expect(detectEnvPrefixes(file)).toEqual(['VITE_', 'NEXT_PUBLIC_'])
      writeFileSync(join(dir, 'package.json'), '{ not json')
      expect(detectEnvPrefixes(file)).toEqual(['VITE_', 'NEXT_PUBLIC_'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('writes the file only when its text changes (a dev server restarts on every write)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-envwrite-'))
    try {
      const file = join(dir, '.env.local')
      expect(writeEnvFile(file, { A: '1' })).toBe(true)
      const past = new Date('2020-01-01T00:00:00Z')
      utimesSync(file, past, past)
      expect(writeEnvFile(file, { A: '1' })).toBe(false)
      expect(statSync(file).mtimeMs).toBe(past.getTime())
      expect(writeEnvFile(file, { A: '2' })).toBe(true)
      expect(statSync(file).mtimeMs).toBeGreaterThan(past.getTime())
      expect(readFileSync(file, 'utf8')).toMatch(/^A=2$/m)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('writes a new file', () => {
    const text = mergeEnvFile('', { A: '1', B: '2' })
    expect(text).toBe('# written by `latchkey-service dev --env` (local service ids)\nA=1\nB=2\n')
  })

  it('replaces its own lines in place and keeps every other line', () => {
    const existing = '# my app\nAPI_URL=https://api.test\nexport A=old\n\nOTHER="x y"\n'
    const text = mergeEnvFile(existing, { A: 'new', B: '2' })
    expect(text).toBe(
      '# my app\nAPI_URL=https://api.test\nA=new\n\nOTHER="x y"\n\n' +
        '# written by `latchkey-service dev --env` (local service ids)\nB=2\n',
    )
    // Running it again changes nothing.
    expect(mergeEnvFile(text, { A: 'new', B: '2' })).toBe(text)
  })
})

describe('the data dir', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const temp = () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-cli-'))
    dirs.push(dir)
    return dir
  }

  it('gets a .gitignore of everything when the CLI creates it', () => {
    const dir = join(temp(), '.latchkey')
    expect(prepareDataDir(dir)).toEqual({ createdGitignore: true })
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toMatch(/^\*$/m)
    // A second start keeps it and does not warn.
    expect(prepareDataDir(dir)).toEqual({ createdGitignore: false })
  })

  it('warns about an existing data dir without one, and leaves it alone', () => {
    const dir = temp()
    mkdirSync(join(dir, 'data'))
    writeFileSync(join(dir, 'data', 'master.key'), '00')
    const result = prepareDataDir(join(dir, 'data'))
    expect(result.warning).toMatch(/master\.key/)
    expect(existsSync(join(dir, 'data', '.gitignore'))).toBe(false)
  })
})

describe('latchkey-service dev --env (the real CLI)', () => {
  const children: ChildProcess[] = []
  const dirs: string[] = []
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL')
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  /** Starts the CLI (bundled from the sources, see test/support/cliEntry.ts) in `cwd`. */
  const spawnCli = (cwd: string, args: string[]) =>
    spawn(process.execPath, [...cliCommand(), 'dev', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })

  /** Starts the CLI in `cwd` and resolves with its --json line once it listens. */
  const start = async (cwd: string, port = '0') => {
    const child = spawnCli(cwd, ['--port', port, '--json', '--env', '.env.local'])
    children.push(child)
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`CLI exited with ${code}`)))
    })
    return { child, info: JSON.parse(line) as Record<string, string> }
  }
  const stop = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve())
      child.kill('SIGTERM')
    })

  it('writes the ids into the env file, keeps other lines, and keeps the ids across restarts', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'latchkey-env-'))
    dirs.push(cwd)
    writeFileSync(join(cwd, '.env.local'), 'API_URL=https://api.test\n')
    const first = await start(cwd)
    expect(first.info.trustedSignerPublicKey).toMatch(/^04[0-9a-f]{128}$/)
    // The old name stays for one version (scripts read it).
    expect(first.info.signerPublicKey).toBe(first.info.trustedSignerPublicKey)
    expect(first.info.outboxUrl).toBe(`${first.info.baseUrl}/dev/outbox`)
    const env = readFileSync(join(cwd, '.env.local'), 'utf8')
    expect(env).toMatch(/^API_URL=https:\/\/api\.test$/m)
    expect(env).toContain(`VITE_LATCHKEY_AUTH_PROXY_CONFIG_ID=${first.info.authProxyConfigId}`)
    expect(env).toContain(`NEXT_PUBLIC_LATCHKEY_ORGANIZATION_ID=${first.info.organizationId}`)
    expect(env).toContain(`VITE_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY=${first.info.trustedSignerPublicKey}`)
    expect(env).toContain(`VITE_LATCHKEY_OUTBOX_URL=${first.info.outboxUrl}`)
    expect(env).toContain('VITE_LATCHKEY_RPC_URL=\n')
    expect(env).not.toContain(first.info.apiPrivateKey)
    // --env implied the .latchkey data dir, which the CLI created with a .gitignore.
    expect(readFileSync(join(cwd, '.latchkey/.gitignore'), 'utf8')).toMatch(/^\*$/m)
    expect(existsSync(join(cwd, '.latchkey/master.key'))).toBe(true)
    // A second service on the same port says what to do about it.
    const port = new URL(first.info.baseUrl!).port
    const busy = spawnCli(cwd, ['--port', port])
    children.push(busy)
    let stderr = ''
    busy.stderr!.on('data', (chunk) => {
      stderr += chunk
    })
    expect(await new Promise((resolve) => busy.once('exit', resolve))).toBe(1)
    expect(stderr).toMatch(new RegExp(`port ${port} is already in use; pass --port 0 to pick a free port`))
    await stop(first.child)
    const past = new Date('2020-01-01T00:00:00Z')
    utimesSync(join(cwd, '.env.local'), past, past)
    // The same port: the URLs in the file stay the same too.
    const second = await start(cwd, port)
    expect(second.info.organizationId).toBe(first.info.organizationId)
    expect(second.info.authProxyConfigId).toBe(first.info.authProxyConfigId)
    expect(second.info.trustedSignerPublicKey).toBe(first.info.trustedSignerPublicKey)
    const again = readFileSync(join(cwd, '.env.local'), 'utf8')
    expect(again.match(/VITE_LATCHKEY_AUTH_PROXY_CONFIG_ID=/g)).toHaveLength(1)
    // Nothing changed, so nothing was written: a watching dev server does not restart.
    expect(statSync(join(cwd, '.env.local')).mtimeMs).toBe(past.getTime())
    await stop(second.child)
  }, 180_000)
})

describe('latchkey-service dev --database-url (the real CLI)', () => {
  let cluster: PostgresCluster
  let child: ChildProcess | undefined
  beforeAll(async () => {
    cluster = await startPostgres()
  }, 120_000)
  afterAll(async () => {
    child?.kill('SIGKILL')
    await cluster?.dispose()
  })

  it('the banner shows the URL without a password given as its ?password= query (pg logs in with it)', async () => {
    const password = 'pgPassw0rd-9f8e7d'
    const url = `${cluster.url}?password=${password}`
    child = spawn(process.execPath, [...cliCommand(), 'dev', '--port', '0', '--database-url', url], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LATCHKEY_MASTER_KEY: 'ab'.repeat(32), LATCHKEY_DATABASE_URL: undefined },
    })
    let stderr = ''
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const data = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child!.stdout! }).on('line', (line) => {
        if (/^\s+data\s/.test(line)) resolve(line)
      })
      child!.once('exit', (code) => reject(new Error(`dev exited with ${code}: ${stderr}`)))
    })
    const { host, pathname } = new URL(cluster.url)
    expect(data).toContain(`PostgreSQL postgres://`)
    expect(data).toContain(`${host}${pathname}?<redacted>`)
    expect(data).not.toContain(password)
  }, 120_000)
})
