// @vitest-environment node
// Server rendering in plain Node: no window, and any touch of browser storage fails the test.
import { renderToString } from 'react-dom/server'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LatchkeyProvider, useSession, useSessionStatus, useWalletKitConfig, useWallets } from './index.ts'

const TRAPS = ['window', 'localStorage', 'sessionStorage', 'indexedDB'] as const
const saved = new Map<string, PropertyDescriptor | undefined>()

beforeEach(() => {
  for (const name of TRAPS) {
    saved.set(name, Object.getOwnPropertyDescriptor(globalThis, name))
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get() {
        throw new Error(`${name} touched during server rendering`)
      },
    })
  }
})
afterEach(() => {
  for (const name of TRAPS) {
    const descriptor = saved.get(name)
    if (descriptor) Object.defineProperty(globalThis, name, descriptor)
    else delete (globalThis as Record<string, unknown>)[name]
  }
})

function Page() {
  const status = useSessionStatus()
  const session = useSession()
  const wallets = useWallets()
  const config = useWalletKitConfig()
  return (
    <main>
      <p>{status}</p>
      <p>{session ? session.userId : 'nobody'}</p>
      <p>{wallets.status}</p>
      <p>{config.status}</p>
    </main>
  )
}

describe('server rendering', () => {
  it('renders the provider and hooks to a string without touching browser APIs', () => {
    const html = renderToString(
      <LatchkeyProvider
        config={{
          authProxyUrl: 'https://auth.example',
          baseUrl: 'https://api.example',
          authProxyConfigId: 'cfg',
          organizationId: 'org',
          fetch: () => Promise.reject(new Error('no network during SSR')),
        }}
      >
        <Page />
      </LatchkeyProvider>,
    )
    expect(html).toBe('<main><p>signed-out</p><p>nobody</p><p>pending</p><p>pending</p></main>')
  })
})
