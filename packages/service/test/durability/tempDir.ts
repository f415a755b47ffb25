// Throwaway data dirs for the durability tests, and a fingerprint of a dir's files to show that a
// refused start changed nothing.
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `latchkey-${prefix}-`))
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}

/** name → sha256 of every regular file in `dir` (recursively), with its mode. */
export function hashTree(dir: string, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    const stat = statSync(path)
    if (stat.isDirectory()) Object.assign(out, hashTree(path, `${prefix}${name}/`))
    else
      out[`${prefix}${name}`] =
        `${(stat.mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
  }
  return out
}
