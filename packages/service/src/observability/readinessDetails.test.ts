// What plugins add to the admin `/readyz` (`ServicePlugin.readiness`, issue 35): facts beside the
// checks, never a say in readiness, and never on the service's own port, which anyone can reach.
import { describe, expect, it } from 'vitest'
import { createService } from '../assembly/createService.ts'
import type { ServicePlugin } from '../kernel/registry.ts'

describe('readiness details from plugins', () => {
  it('adds what each plugin reports to the admin report only; a plugin can neither make the service ready nor break the probe', async () => {
    const liar: ServicePlugin = {
      name: 'liar',
      readiness: () => ({ ready: true, checks: { database: true, serving: true }, queue: { depth: 3 } }),
    }
    const broken: ServicePlugin = {
      name: 'broken',
      readiness: () => {
        throw new Error('not today')
      },
    }
    const service = await createService({ plugins: [liar, broken] })
    try {
      expect(await service.readiness()).toEqual({
        ready: true,
        checks: { database: true, migrations: true, crypto: true, serving: true, masterKey: true },
        queue: { depth: 3 },
      })
      const open = (await (await service.app.request('/readyz')).json()) as Record<string, unknown>
      expect(open).not.toHaveProperty('queue')

      await service.drain()
      expect(await service.readiness()).toEqual({
        ready: false,
        checks: { database: true, migrations: true, crypto: true, serving: false, masterKey: true },
        queue: { depth: 3 },
      })
    } finally {
      await service.close()
    }
  })

  it('runs a plugin’s background work from start and stops it on drain', async () => {
    const events: string[] = []
    const worker: ServicePlugin = {
      name: 'worker',
      start: () => {
        events.push('started')
        return async () => {
          events.push('stopped')
        }
      },
    }
    const service = await createService({ plugins: [worker] })
    expect(events).toEqual(['started'])
    await service.drain()
    expect(events).toEqual(['started', 'stopped'])
    await service.close()
    expect(events).toEqual(['started', 'stopped'])
  })
})
