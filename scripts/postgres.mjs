// A throwaway PostgreSQL for tests and benches: finds the server binaries (installing Debian's
// `postgresql` with apt-get when they are missing, as ensure-chromium.sh does for Chromium),
// copies an `initdb`ed template into a temporary folder, runs it on a free port on 127.0.0.1 (trust auth on
// loopback only, unix sockets in the temp folder, fsync on unless asked off) and removes it afterwards.
// PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` OS user and
// its programs run under that uid.
//
//   node scripts/postgres.mjs --check     start a cluster, `select 1`, stop it (prints timings)
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { aptInstall } from './apt.mjs'

const PROGRAMS = ['initdb', 'postgres', 'psql']

/** `postgres (PostgreSQL) 15.18 (Debian …)` → [15, 18]. */
function versionOf(binDir) {
  try {
    const text = execFileSync(path.join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' })
    const match = /(\d+)(?:\.(\d+))?/.exec(text)
    return match ? [Number(match[1]), Number(match[2] ?? 0)] : undefined
  } catch {
    return undefined
  }
}

/** Folders holding initdb, postgres and psql (symlinks resolved), best version first. */
function findBinDirs() {
  const candidates = new Set()
  const add = (dir) => {
    // /usr/local/bin/initdb may be a symlink into /usr/lib/postgresql/N/bin: take the real folder,
    // where psql and postgres of the same version sit beside it.
    const initdb = path.join(dir, 'initdb')
    if (!existsSync(initdb)) return
    const real = path.dirname(realpathSync(initdb))
    if (PROGRAMS.every((program) => existsSync(path.join(real, program)))) candidates.add(real)
  }
  // LATCHKEY_PG_BIN names the one folder to use.
  if (process.env.LATCHKEY_PG_BIN) add(process.env.LATCHKEY_PG_BIN)
  else {
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) if (dir) add(dir)
    add('/usr/local/bin')
    const debian = '/usr/lib/postgresql'
    if (existsSync(debian)) for (const version of readdirSync(debian)) add(path.join(debian, version, 'bin'))
  }
  return [...candidates]
    .map((dir) => ({ dir, version: versionOf(dir) }))
    .filter((entry) => entry.version)
    .sort((a, b) => b.version[0] - a.version[0] || b.version[1] - a.version[1])
}

let ensured

/**
 * The server's bin folder (`{ binDir, version, installedMs }`), installing Debian's `postgresql`
 * when no initdb/postgres/psql is found (PATH, /usr/local/bin, /usr/lib/postgresql/N/bin, or
 * LATCHKEY_PG_BIN). `installedMs` is the time apt-get took, 0 when nothing was installed.
 */
export function ensurePostgres() {
  if (ensured) return ensured
  let found = findBinDirs()
  let installedMs = 0
  if (found.length === 0) {
    const started = performance.now()
    aptInstall(['postgresql'], {
      what: 'postgres',
      hint: 'install PostgreSQL (Debian: apt-get install postgresql) or set LATCHKEY_PG_BIN to its bin folder',
    })
    installedMs = Math.round(performance.now() - started)
    found = findBinDirs()
    if (found.length === 0)
      throw new Error('postgres: apt-get installed postgresql but no folder holds initdb, postgres and psql')
  }
  const [{ dir, version }] = found
  ensured = { binDir: dir, version: version.join('.'), installedMs }
  return ensured
}

/** A port the OS says is free on 127.0.0.1 (released before returning; a small race remains). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** The OS user the cluster runs as: ourselves, or `postgres` when we are root. */
function clusterUser() {
  if (process.getuid?.() !== 0) return undefined
  const read = (flag) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' })
  const uid = read('-u')
  const gid = read('-g')
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error(
      'postgres: running as root, and PostgreSQL refuses to run as root, but there is no `postgres` OS user to run it as ' +
        "(Debian's postgresql package creates one; or `useradd --system postgres`)",
    )
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

/**
 * initdb takes seconds and its output is the same for every cluster of one server version and
 * owner, so it runs once per machine into a template folder under tmpdir (made in a private
 * folder and renamed into place, so concurrent test workers never see half of it) and each
 * cluster starts from a copy (`cp -a` keeps the owner and modes PostgreSQL checks).
 */
function copyTemplate(binDir, user, asOwner, ownerEnv, dataDir) {
  const template = path.join(
    tmpdir(),
    `latchkey-pg-template-${path.basename(path.dirname(binDir))}-${user ? user.uid : (process.getuid?.() ?? 'user')}`,
  )
  if (!existsSync(path.join(template, 'PG_VERSION'))) {
    const staging = mkdtempSync(path.join(tmpdir(), 'latchkey-pg-staging-'))
    chmodSync(staging, 0o700)
    if (user) chownSync(staging, user.uid, user.gid)
    const stagingData = path.join(staging, 'data')
    // --no-sync: initdb's own files need no flush for clusters that live one test run; the
    // server itself runs with fsync on.
    const init = spawnSync(
      bin(binDir, 'initdb'),
      ['-D', stagingData, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      { ...asOwner, env: { ...ownerEnv, ...(user ? { HOME: staging } : {}) }, encoding: 'utf8' },
    )
    if (init.status !== 0) {
      rmSync(staging, { recursive: true, force: true })
      throw new Error(
        `postgres: initdb failed (${init.status ?? init.signal}):\n${init.stderr}${init.stdout}`,
      )
    }
    try {
      renameSync(stagingData, template)
    } catch (error) {
      // Another worker's template landed first: use that one.
      if (!existsSync(path.join(template, 'PG_VERSION'))) throw error
    } finally {
      rmSync(staging, { recursive: true, force: true })
    }
  }
  const copy = spawnSync('cp', ['-a', template, dataDir], { encoding: 'utf8' })
  if (copy.status !== 0) throw new Error(`postgres: copying the initdb template failed:\n${copy.stderr}`)
}

const bin = (binDir, program) => path.join(binDir, program)

const live = new Set()
let hooked = false

/** Last resort: a test process that ends without dispose() still stops its clusters. */
function hookExit() {
  if (hooked) return
  hooked = true
  process.on('exit', () => {
    for (const cluster of live) cluster.killNow()
  })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    const onSignal = () => {
      for (const cluster of live) cluster.killNow()
      // Nobody else listens: do what the signal would have done.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
    }
    process.once(signal, onSignal)
  }
}

/**
 * Starts a throwaway cluster with one database (`database`, default 'latchkey') owned by the
 * superuser `postgres`. Resolves once it accepts connections on 127.0.0.1.
 *
 * `fsync` (default: on, off when env `LATCHKEY_PG_FSYNC=off`, as the Vitest config sets it):
 * off, a commit still writes its WAL to the operating system before it answers, so what a test can
 * do (kill -9 of a service, an immediate shutdown or kill of the server) loses nothing committed;
 * only a crash of the machine could, which no test makes. The benches keep it on.
 *
 * `preload`: libraries PostgreSQL loads at start (`shared_preload_libraries`), such as
 * `pg_stat_statements` for the service bench's `--statements`.
 */
export async function startPostgres({
  database = 'latchkey',
  maxConnections = 200,
  timeoutMs = 30_000,
  fsync = process.env.LATCHKEY_PG_FSYNC !== 'off',
  log,
  preload = [],
} = {}) {
  const { binDir } = ensurePostgres()
  const user = clusterUser()
  const startedAt = performance.now()
  const root = mkdtempSync(path.join(tmpdir(), 'latchkey-pg-'))
  const dataDir = path.join(root, 'data')
  // The cluster's owner must write the socket folder (root) and create the data folder.
  chmodSync(root, 0o700)
  if (user) chownSync(root, user.uid, user.gid)
  const asOwner = user ? { uid: user.uid, gid: user.gid } : {}
  const ownerEnv = { ...process.env, LC_ALL: 'C', ...(user ? { HOME: root, USER: 'postgres' } : {}) }

  try {
    copyTemplate(binDir, user, asOwner, ownerEnv, dataDir)
  } catch (error) {
    rmSync(root, { recursive: true, force: true })
    throw error
  }
  // Trust on the unix socket (in our private folder) and on loopback TCP; nothing else is allowed.
  const hba = path.join(dataDir, 'pg_hba.conf')
  writeFileSync(
    hba,
    ['local all all trust', 'host all all 127.0.0.1/32 trust', 'host all all ::1/128 trust', ''].join('\n'),
  )
  if (user) chownSync(hba, user.uid, user.gid)

  let port = await freePort()
  let child
  let exited
  const output = []
  const remember = (chunk) => {
    for (const line of String(chunk).split('\n')) {
      if (!line) continue
      output.push(line)
      if (output.length > 200) output.shift()
      log?.(`[postgres] ${line}`)
    }
  }

  const spawnServer = () =>
    new Promise((resolve, reject) => {
      const args = [
        '-D',
        dataDir,
        '-c',
        `port=${port}`,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${root}`,
        '-c',
        `fsync=${fsync ? 'on' : 'off'}`,
        '-c',
        'synchronous_commit=on',
        '-c',
        `max_connections=${maxConnections}`,
        '-c',
        'logging_collector=off',
        '-c',
        'log_min_messages=warning',
        // Extensions that must be loaded at start (the bench's `--statements`: pg_stat_statements).
        ...(preload.length > 0 ? ['-c', `shared_preload_libraries=${preload.join(',')}`] : []),
      ]
      const server = spawn(bin(binDir, 'postgres'), args, {
        ...asOwner,
        env: ownerEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child = server
      exited = new Promise((done) => server.once('exit', (code, signal) => done({ code, signal })))
      server.stdout.on('data', remember)
      let ready = false
      const timer = setTimeout(() => {
        server.kill('SIGQUIT')
        reject(new Error(`postgres: not ready within ${timeoutMs} ms\n${output.slice(-20).join('\n')}`))
      }, timeoutMs)
      server.stderr.on('data', (chunk) => {
        remember(chunk)
        if (!ready && /database system is ready to accept connections/.test(String(chunk))) {
          ready = true
          clearTimeout(timer)
          resolve()
        }
      })
      exited.then(({ code, signal }) => {
        live.delete(handle)
        if (ready) return
        clearTimeout(timer)
        reject(
          new Error(
            `postgres: exited (${signal ?? code}) before it was ready\n${output.slice(-20).join('\n')}`,
          ),
        )
      })
    })

  const running = () => child && child.exitCode === null && child.signalCode === null
  const psql = (sql, db = 'postgres') => {
    const result = spawnSync(
      bin(binDir, 'psql'),
      [
        '-X',
        '-q',
        '-t',
        '-A',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-d',
        db,
        '-c',
        sql,
      ],
      { encoding: 'utf8', env: { ...process.env, PGCONNECT_TIMEOUT: '5' } },
    )
    if (result.status !== 0)
      throw new Error(`postgres: psql ${JSON.stringify(sql)} failed:\n${result.stderr}`)
    return result.stdout.trim()
  }

  /** Stops the server with `mode`'s signal and waits for it to exit. */
  const stopWith = async (signal) => {
    if (!running()) return
    hookExit()
    const done = exited
    child.kill(signal)
    // A fast shutdown that hangs (a stuck client) is made immediate, then killed.
    const escalate = setTimeout(() => child.kill('SIGQUIT'), 10_000)
    const last = setTimeout(() => child.kill('SIGKILL'), 20_000)
    await done
    clearTimeout(escalate)
    clearTimeout(last)
  }

  const handle = {
    host: '127.0.0.1',
    port,
    database,
    url: '',
    dataDir,
    binDir,
    startMs: 0,
    /** Starts the server again on the same port with the same data. */
    async start() {
      if (running()) return
      live.add(handle)
      hookExit()
      await spawnServer()
    },
    /** Fast shutdown (SIGINT): clients are disconnected, a checkpoint is written. */
    stop: () => stopWith('SIGINT'),
    /** Immediate shutdown (SIGQUIT): no checkpoint, crash recovery at the next start. */
    kill: () => stopWith('SIGQUIT'),
    async restart() {
      await handle.stop()
      await handle.start()
    },
    /** SQL through psql as the superuser (tests' inspection only); returns psql's unaligned output. */
    psql: (sql, db = database) => psql(sql, db),
    /** The server's last log lines. */
    logs: () => output.join('\n'),
    /** Stops the server and removes its folder. */
    async dispose() {
      await stopWith('SIGINT')
      live.delete(handle)
      rmSync(root, { recursive: true, force: true })
    },
    killNow() {
      if (running()) child.kill('SIGQUIT')
      try {
        rmSync(root, { recursive: true, force: true })
      } catch {}
    },
  }

  live.add(handle)
  hookExit()
  // The port picked may be taken between freePort() and the server's bind: try a few.
  for (let attempt = 0; ; attempt++) {
    try {
      await spawnServer()
      break
    } catch (error) {
      if (attempt >= 3 || !/could not (create|bind)|Address already in use/i.test(String(error))) {
        live.delete(handle)
        rmSync(root, { recursive: true, force: true })
        throw error
      }
      port = await freePort()
    }
  }
  handle.port = port
  psql(`CREATE DATABASE "${database.replaceAll('"', '""')}"`)
  handle.url = `postgres://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}`
  handle.startMs = Math.round(performance.now() - startedAt)
  return handle
}

async function check() {
  const t0 = performance.now()
  const { binDir, version, installedMs } = ensurePostgres()
  const findMs = Math.round(performance.now() - t0)
  console.log(
    `postgres ${version} in ${binDir} (${installedMs ? `apt-get install ${installedMs} ms` : `found in ${findMs} ms, nothing installed`})`,
  )
  const cluster = await startPostgres()
  try {
    console.log(
      `cluster started in ${cluster.startMs} ms (template copy + start + create database; the first run initdbs the template): ${cluster.url}`,
    )
    const one = cluster.psql('select 1')
    if (one !== '1') throw new Error(`select 1 answered ${JSON.stringify(one)}`)
    console.log(
      `select 1 → ${one}; fsync=${cluster.psql('show fsync')}, max_connections=${cluster.psql('show max_connections')}`,
    )
    let t = performance.now()
    await cluster.stop()
    const stopMs = Math.round(performance.now() - t)
    t = performance.now()
    await cluster.start()
    const restartMs = Math.round(performance.now() - t)
    if (cluster.psql('select 1') !== '1') throw new Error('select 1 failed after the restart')
    console.log(`stop ${stopMs} ms, start again on port ${cluster.port} ${restartMs} ms, select 1 → 1`)
  } finally {
    await cluster.dispose()
  }
  console.log('stopped and removed')
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check'))
    check().catch((error) => {
      console.error(error.message ?? error)
      process.exit(1)
    })
  else {
    console.error('usage: node scripts/postgres.mjs --check')
    process.exit(2)
  }
}
