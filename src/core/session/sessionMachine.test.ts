import { describe, expect, it } from 'vitest'
import { type SessionEvent, type SessionStatus, sessionTransition } from './sessionMachine.ts'

const STATES: (SessionStatus | undefined)[] = [undefined, 'active', 'expiring', 'expired', 'storage-lost']
const EVENTS: SessionEvent['type'][] = ['SIGNED_IN', 'WARN', 'REFRESHED', 'EXPIRE', 'KEY_MISSING']

describe('session state machine', () => {
  it('has exactly these transitions', () => {
    const table = Object.fromEntries(
      STATES.map((state) => [
        String(state),
        Object.fromEntries(EVENTS.map((type) => [type, String(sessionTransition(state, { type }))])),
      ]),
    )
    expect(table).toEqual({
      undefined: {
        SIGNED_IN: 'active',
        WARN: 'undefined',
        REFRESHED: 'undefined',
        EXPIRE: 'undefined',
        KEY_MISSING: 'undefined',
      },
      active: {
        SIGNED_IN: 'active',
        WARN: 'expiring',
        REFRESHED: 'active',
        EXPIRE: 'expired',
        KEY_MISSING: 'storage-lost',
      },
      expiring: {
        SIGNED_IN: 'active',
        WARN: 'expiring',
        REFRESHED: 'active',
        EXPIRE: 'expired',
        KEY_MISSING: 'storage-lost',
      },
      expired: {
        SIGNED_IN: 'active',
        WARN: 'expired',
        REFRESHED: 'expired',
        EXPIRE: 'expired',
        KEY_MISSING: 'storage-lost',
      },
      'storage-lost': {
        SIGNED_IN: 'active',
        WARN: 'storage-lost',
        REFRESHED: 'storage-lost',
        EXPIRE: 'storage-lost',
        KEY_MISSING: 'storage-lost',
      },
    })
  })
})
