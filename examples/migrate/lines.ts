// Shared by the converters: reading a source export (a JSON array, a JSON object holding one under
// `data`/`users`/`organizations`, or JSON lines) and writing Latchkey's import format, one user a
// line (docs/migrate.md). Run a converter with `npx tsx examples/migrate/fromPrivy.ts users.json >
// users.jsonl`; it prints what it could not carry (what needs the user) to stderr.
import { readFileSync } from 'node:fs'

/** One line of `latchkey-service import --from` (ImportUserParams), without secrets. */
export interface ImportLine {
  externalId: string
  userName?: string
  email?: string
  phoneNumber?: string
  oauthProviders?: { issuer: string; subject: string; providerName?: string; audience?: string }[]
  passkeys?: { credentialId: string; cosePublicKey: string; name?: string }[]
}

/** What a converter made of one source user: its line, and what only the person can bring. */
export interface Converted {
  line: ImportLine
  /** E.g. an embedded wallet's address: its key stays with the old provider until the person exports it. */
  needsUser: string[]
}

/** The records of a source export, whatever its envelope. */
export function readRecords(text: string, envelopes: string[]): Record<string, unknown>[] {
  const trimmed = text.trim()
  if (trimmed === '') return []
  if (trimmed.startsWith('[') || (trimmed.startsWith('{') && !trimmed.includes('\n'))) {
    const value = JSON.parse(trimmed) as unknown
    if (Array.isArray(value)) return value as Record<string, unknown>[]
    for (const envelope of envelopes) {
      const inner = (value as Record<string, unknown>)[envelope]
      if (Array.isArray(inner)) return inner as Record<string, unknown>[]
    }
    return [value as Record<string, unknown>]
  }
  return trimmed.split('\n').flatMap((line, index) => {
    if (line.trim() === '') return []
    try {
      return [JSON.parse(line) as Record<string, unknown>]
    } catch (error) {
      throw new Error(`line ${index + 1}: not JSON (${(error as Error).message})`)
    }
  })
}

/** `+1 (555) 123-4567` → `+15551234567`; anything that is not E.164 afterwards → undefined. */
export function e164(raw: unknown, countryCode?: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined
  let digits = raw.replace(/[\s().-]/g, '')
  if (!digits.startsWith('+') && typeof countryCode === 'string' && countryCode !== '')
    digits = `+${countryCode.replace(/^\+/, '')}${digits}`
  return /^\+[1-9]\d{6,14}$/.test(digits) ? digits : undefined
}

/** The OIDC issuers Latchkey's OAuth login verifies tokens of, by the providers' usual names. */
export const OIDC_ISSUERS: Record<string, string> = {
  google: 'https://accounts.google.com',
  apple: 'https://appleid.apple.com',
}

/** Drops the fields a line does not have. */
export function compact(line: ImportLine): ImportLine {
  return Object.fromEntries(
    Object.entries(line).filter(
      ([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0),
    ),
  ) as unknown as ImportLine
}

/** The command line of a converter: the file named, converted, lines to stdout and a summary to stderr. */
export function main(convert: (record: Record<string, unknown>) => Converted, envelopes: string[]): void {
  const file = process.argv[2]
  if (!file) {
    process.stderr.write(`usage: npx tsx ${process.argv[1]} <export file> > users.jsonl\n`)
    process.exitCode = 64
    return
  }
  let users = 0
  for (const record of readRecords(readFileSync(file, 'utf8'), envelopes)) {
    const { line, needsUser } = convert(record)
    process.stdout.write(`${JSON.stringify(line)}\n`)
    users++
    for (const note of needsUser) process.stderr.write(`${line.externalId}: ${note}\n`)
  }
  process.stderr.write(`${users} users converted\n`)
}
