// Node only: `latchkey-service import --from users.jsonl --url URL --organization-id ID
// --root-key-file FILE --trusted-signer-public-key HEX`: submits one `latchkey_import_user` per
// line to a running service as the parent organization's root key. A rerun skips what is done
// (the external id); a bad line is reported with its number and reason and nothing else is
// affected.
import { closeSync, constants, createWriteStream, fstatSync, openSync, type WriteStream } from 'node:fs'
import { p256 } from '@noble/curves/nist.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { SingleBar } from 'cli-progress'
import { bulkImport, type ImportProgress, type Rejection } from '../importing/bulkImport.ts'
import { importClient, readRootKey } from '../importing/importClient.ts'
import { isLoopbackAddress } from '../pipeline/originPolicy.ts'
import { readFlags } from './commandLine.ts'
import { UsageError } from './parseDevFlags.ts'

const USAGE = `Usage: latchkey-service import --from <users.jsonl> --url <service URL> --organization-id <id>
         --root-key-file <file> --trusted-signer-public-key <hex>
         [--concurrency <n>] [--rate <users per second>] [--rejected <file>]

Imports one user per line (external id, contacts, OAuth subjects, passkeys, wallets and private
keys; see docs/migrate.md) into sub-organizations of <id>, stamped by its root user's P-256 key
(<file>: PEM or 64 hex characters). Wallets and keys are encrypted to the organization's import
key; plaintext "mnemonic"/"privateKey" fields are accepted only from a file nobody but its owner
can read (chmod 600), and encrypted here before anything is sent.

The import key is used only when the service's signed answer verifies against
--trusted-signer-public-key (the trustedSignerPublicKey that init and start print), is signed as
the organization's import key (not a user's own import target) and names <id> and the root key's
user; otherwise no plaintext line is encrypted (each is rejected). --url is https://, or http://
on this machine only (localhost, 127.0.0.0/8, [::1]; not a name under .localhost, which DNS may
resolve elsewhere).

A rerun skips users already imported: it asks the service which external ids are done, a
hundred lines at a time, and sends only the others. --rate caps users per second (a maintenance window);
--concurrency users in flight (default 4). A terminal shows a progress bar; otherwise progress,
each rejected line and the totals are JSON lines on stdout. Rejected lines also go to
--rejected <file> as JSON lines. Exits 2 when some line was rejected.`

/**
 * `path` opened to append (a rerun adds to the report of the run before), made 0600 when new. The
 * report names people (their external ids), so a file others can read (one left 0644, or made by
 * someone else) is refused rather than written to, and so is a symlink, which would be written
 * through: the operator chmods it or names a new file.
 */
function reportFile(path: string): WriteStream {
  let fd: number
  try {
    fd = openSync(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    )
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new UsageError(`import: --rejected ${path} is a symlink; name the file itself`)
    throw error
  }
  const stat = fstatSync(fd)
  const problem = !stat.isFile()
    ? 'is not a regular file'
    : (stat.mode & 0o077) !== 0
      ? `can be read or written by others (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 it or name a new file`
      : typeof process.getuid === 'function' && stat.uid !== process.getuid()
        ? 'belongs to another user; name a file of your own'
        : undefined
  if (problem) {
    closeSync(fd)
    throw new UsageError(`import: --rejected ${path} ${problem}: the report names the rejected users`)
  }
  return createWriteStream(path, { fd })
}

function positive(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`import: --${name} must be a positive number`)
  return n
}

/**
 * A URL's (normalised) hostname an http:// `--url` may name: `localhost`, 127.0.0.0/8 or [::1],
 * nothing else. Not a name under `.localhost` (which browsers keep on this machine): Node asks the
 * system resolver for it, and where that resolver asks DNS, whoever answers DNS chooses the machine.
 */
function namesThisMachine(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || isLoopbackAddress(hostname)
}

/**
 * `--url`, refused unless https:// or http:// to this machine: the answers say which key the
 * plaintext secrets are encrypted to, and every request carries the file's users.
 */
function serviceUrl(value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new UsageError(`import: --url ${value} is not a URL; pass https://<service host>`)
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && namesThisMachine(url.hostname))) return value
  throw new UsageError(
    `import: --url ${value} must be https:// (http:// only to localhost, 127.0.0.0/8 or [::1], not a name under .localhost, which DNS may resolve elsewhere): anyone on the way would read the users and choose the key their secrets are encrypted to`,
  )
}

/** `--trusted-signer-public-key`: a P-256 public key in hex (130 characters from 04, or 66). */
function signerKey(value: string): Uint8Array {
  const hex = value.trim().replace(/^0x/i, '')
  try {
    if (!/^(04[0-9a-f]{128}|0[23][0-9a-f]{64})$/i.test(hex)) throw new Error('not hex')
    return p256.Point.fromBytes(hexToBytes(hex.toLowerCase())).toBytes(false)
  } catch {
    throw new UsageError(
      "import: --trusted-signer-public-key must be the service signer's P-256 public key in hex (the trustedSignerPublicKey `init` and `start` print: 130 characters starting 04, or 66 compressed)",
    )
  }
}

/** Runs `import` with the arguments after its name. */
export async function run(argv: string[]): Promise<void> {
  const values = readFlags('import', argv, {
    strings: [
      'from',
      'url',
      'organization-id',
      'root-key-file',
      'trusted-signer-public-key',
      'concurrency',
      'rate',
      'rejected',
    ],
    booleans: ['help'],
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  for (const name of [
    'from',
    'url',
    'organization-id',
    'root-key-file',
    'trusted-signer-public-key',
  ] as const)
    if (values[name] === undefined) throw new UsageError(`import: pass --${name}\n\n${USAGE}`)
  const url = serviceUrl(values.url!)
  const trustedSignerPublicKey = signerKey(values['trusted-signer-public-key']!)
  const concurrency = positive('concurrency', values.concurrency)
  const rate = positive('rate', values.rate)
  // Checked first: a report file that would leak is refused before anything is sent.
  const rejectedFile = values.rejected ? reportFile(values.rejected) : undefined
  const client = importClient({
    url,
    organizationId: values['organization-id']!,
    privateKey: readRootKey(values['root-key-file']!),
    trustedSignerPublicKey,
  })
  // A terminal gets one bar that redraws in place (cli-progress: ETA, rate, no flicker, restores
  // the cursor); a pipe or a log gets one JSON line per event, which tools can read.
  const tty = process.stderr.isTTY === true
  const bar = tty
    ? new SingleBar({
        format:
          'import |{bar}| {read} read · {imported} imported · {skipped} skipped · {rejected} rejected · {perMinute}/min',
        hideCursor: true,
      })
    : undefined
  bar?.start(1, 0, { read: 0, imported: 0, skipped: 0, rejected: 0, perMinute: 0 })
  const show = (p: ImportProgress) => {
    const fields = { ...p, perMinute: Math.round(p.perMinute), elapsedMs: Math.round(p.elapsedMs) }
    if (bar) {
      bar.setTotal(Math.max(1, p.read))
      bar.update(p.imported + p.skipped + p.rejected, fields)
    } else process.stdout.write(`${JSON.stringify({ event: 'progress', ...fields })}\n`)
  }
  const rejected = (r: Rejection) => {
    const line = JSON.stringify({ event: 'rejected', ...r })
    rejectedFile?.write(`${line}\n`)
    if (bar)
      process.stderr.write(`\nline ${r.line}${r.externalId ? ` (${r.externalId})` : ''}: ${r.reason}\n`)
    else process.stdout.write(`${line}\n`)
  }
  let totals: ImportProgress
  try {
    totals = await bulkImport({
      file: values.from!,
      submit: (params) => client.importUser(params),
      importKey: () => client.importKey(),
      alreadyImported: (externalIds) => client.importedAmong(externalIds),
      ...(concurrency ? { concurrency: Math.floor(concurrency) } : {}),
      ...(rate ? { ratePerSecond: rate } : {}),
      onProgress: show,
      onRejected: rejected,
    })
  } finally {
    bar?.stop()
    await new Promise<void>((resolve) => (rejectedFile ? rejectedFile.end(resolve) : resolve()))
  }
  const done = {
    event: 'done',
    ...totals,
    perMinute: Math.round(totals.perMinute),
    elapsedMs: Math.round(totals.elapsedMs),
  }
  process.stdout.write(`${JSON.stringify(done)}\n`)
  if (totals.rejected > 0) process.exitCode = 2
}
