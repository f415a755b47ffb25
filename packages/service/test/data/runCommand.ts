// The operator commands (`migrate`, `backup`, `restore`, `rotate-master-key`) as child processes,
// run to their exit (the bundled CLI, see support/cliEntry.ts) from the repository's root, as an operator runs them.
import { spawn } from 'node:child_process'
import { cliCommand } from '../support/cliEntry.ts'
import { root } from '../support/serviceProcess.ts'

export interface CommandResult {
  code: number | null
  stdout: string
  stderr: string
}

/** `latchkey-service <args…>` to its exit; `env` entries set to `undefined` are removed. */
export function runCommand(
  args: string[],
  env: Record<string, string | undefined> = {},
  timeoutMs = 120_000,
): Promise<CommandResult> {
  const merged: Record<string, string | undefined> = { ...process.env, LATCHKEY_DATABASE_URL: undefined }
  for (const [name, value] of Object.entries(env)) merged[name] = value
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name]
  const child = spawn(process.execPath, [...cliCommand(), ...args], {
    cwd: root,
    env: merged,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    }),
  )
}
