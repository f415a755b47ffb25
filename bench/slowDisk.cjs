// A disk whose syncs are slow at times, for measuring how the service rides it out (issue 42):
// preload it into the service, `NODE_OPTIONS="--require ./bench/slowDisk.cjs" npx tsx
// bench/service.ts --only sqlite ...` (the bench's processes inherit it; only the service syncs).
// Every sync, blocking or not, first waits a delay drawn from the disk's mode at that moment: 7 s
// of every 10 fast (0.3-1 ms), 3 s slow (2-6 ms, and 2% of syncs 20-40 ms), which is roughly what
// this machine's shared disk did at its worst (bench/README.md, "Latency under a steady load").
// A blocking sync (SQLite's `fsyncSync`) blocks the thread for it, as a slow disk does.
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const { syncBuiltinESMExports } = require('node:module')

const sleeper = new Int32Array(new SharedArrayBuffer(4))
function delay() {
  const slow = Date.now() % 10_000 >= 7_000
  if (!slow) return 0.3 + Math.random() * 0.7
  return Math.random() < 0.02 ? 20 + Math.random() * 20 : 2 + Math.random() * 4
}

const fsyncSync = fs.fsyncSync
fs.fsyncSync = function (fd) {
  Atomics.wait(sleeper, 0, 0, delay())
  return fsyncSync.call(this, fd)
}
const open = fsp.open
let patched = false
fsp.open = async function (...args) {
  const handle = await open.apply(this, args)
  if (!patched) {
    patched = true
    const prototype = Object.getPrototypeOf(handle)
    for (const name of ['datasync', 'sync']) {
      const real = prototype[name]
      prototype[name] = async function () {
        await new Promise((resolve) => setTimeout(resolve, delay()))
        return real.call(this)
      }
    }
  }
  return handle
}
// `import { open } from 'node:fs/promises'` sees the wrapper too.
syncBuiltinESMExports()
