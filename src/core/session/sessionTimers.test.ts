import { describe, expect, it } from 'vitest'
import { createLatchkey } from '../createLatchkey.ts'
import { addSessionFromKey } from './sessions.ts'

/** The timers keeping this process alive (`process.getActiveResourcesInfo`: unref'd ones are not). */
const liveTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length

describe("a session's timers in Node", () => {
  it("keep no process alive: a back end's script with a ten-year API-key session ends when its work does", () => {
    const client = createLatchkey({
      baseUrl: 'http://127.0.0.1:1',
      authProxyUrl: 'http://127.0.0.1:1',
      authProxyConfigId: 'config',
      organizationId: 'org',
      keyStore: 'memory',
      storage: null,
      session: { autoRefresh: true },
    })
    try {
      const before = liveTimers()
      // The delegated-access recipe's back end: an API key's session, warned, refreshed and ended
      // by timers, which held `npx tsx examples/delegated-access.ts` open after its last line.
      addSessionFromKey(client, {
        publicKey: `02${'11'.repeat(32)}`,
        userId: 'user',
        organizationId: 'org',
        lifetimeSeconds: 10 * 365 * 24 * 3600,
        method: 'api-key',
      })
      addSessionFromKey(client, {
        publicKey: `02${'22'.repeat(32)}`,
        userId: 'user',
        organizationId: 'org',
        lifetimeSeconds: 60,
        method: 'api-key',
      })
      expect(liveTimers()).toBe(before)
    } finally {
      client.destroy()
    }
  })
})
