// CPU time read from /proc (Linux; undefined elsewhere): what `bench/service.ts` and
// `bench/limitsAllocations.ts` print a request of the service, its main thread and PostgreSQL.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** A process's (or thread's) name, parent and CPU ticks (utime + stime) from its stat file. */
function ticks(pid: string | number, path = `/proc/${pid}/stat`) {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(path, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    parent: Number(fields[1]),
    cpu: Number(fields[11]) + Number(fields[12]),
    /** Of its children that ended and were waited for (cutime + cstime). */
    children: Number(fields[13]) + Number(fields[14]),
  }
}

/** The postmaster's pid of the cluster in `dataDir` (`postmaster.pid`), if it runs. */
function postmasterPid(dataDir: string | undefined): number | undefined {
  if (dataDir === undefined) return undefined
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * CPU time (ms) used so far by the processes `pids`, by their main threads (the thread that serves
 * requests; not the crypto workers, V8's compiler and GC threads, libuv's pool), and by the
 * PostgreSQL cluster in `dataDir`: its postmaster and the processes it started, those that ended
 * too, not another cluster on the same machine.
 */
export function processCpu(
  pids: number[],
  dataDir?: string,
): { service: number; main: number; postgres: number } | undefined {
  try {
    const service = pids.reduce((sum, pid) => sum + ticks(pid).cpu, 0)
    const main = pids.reduce((sum, pid) => sum + ticks(pid, `/proc/${pid}/task/${pid}/stat`).cpu, 0)
    let postgres = 0
    const postmaster = postmasterPid(dataDir)
    if (postmaster !== undefined)
      for (const entry of readdirSync('/proc'))
        if (/^\d+$/.test(entry))
          try {
            const { comm, parent, cpu, children } = ticks(entry)
            // A backend that ended during the run (its connection closed) no longer counts among
            // the postmaster's children, but its CPU does among the postmaster's ended children's.
            if (comm === 'postgres' && Number(entry) === postmaster) postgres += cpu + children
            else if (comm === 'postgres' && parent === postmaster) postgres += cpu
          } catch {}
    // Clock ticks are 100 a second on Linux.
    return { service: service * 10, main: main * 10, postgres: postgres * 10 }
  } catch {
    return undefined
  }
}

/** Context switches so far (voluntary + involuntary) of every thread of `pid`. */
export function contextSwitches(pid: number): number {
  let switches = 0
  for (const task of readdirSync(`/proc/${pid}/task`))
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8')
      for (const match of status.matchAll(/ctxt_switches:\s+(\d+)/g)) switches += Number(match[1])
    } catch {}
  return switches
}
