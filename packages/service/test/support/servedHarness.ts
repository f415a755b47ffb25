// A test harness served over HTTP on loopback, for the published clients and examples that need a
// base URL: the service's (fake) clock follows real time, since those clients stamp with Date.now().
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { createHarness, fakeClock, type Harness } from '../../src/testing/harness.ts'

export interface ServedHarness {
  h: Harness
  /** `http://127.0.0.1:<port>`, the service's address. */
  baseUrl: string
  /** Stops the clock, the server and the service. */
  close(): Promise<void>
}

export async function serveHarness(): Promise<ServedHarness> {
  const h = await createHarness({ clock: fakeClock(Date.now()) })
  const tick = setInterval(() => h.clock.set(Date.now()), 10)
  const server = serve({ fetch: h.service.app.fetch, port: 0, hostname: '127.0.0.1' })
  await new Promise((resolve) => server.once('listening', resolve))
  return {
    h,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      clearInterval(tick)
      server.close()
      await h.service.close()
    },
  }
}
