// @vitest-environment node
// Server rendering in plain Node: there is no window, and touching browser storage throws.
import { renderToString } from 'react-dom/server'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

type Entry = typeof import('../index.ts')
const TRAPS = ['localStorage', 'sessionStorage', 'indexedDB'] as const
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

function Page({ latchkey }: { latchkey: Entry }) {
  const status = latchkey.useSessionStatus()
  const session = latchkey.useSession()
  const wallets = latchkey.useWallets()
  const config = latchkey.useWalletKitConfig()
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
  it('imports, creates the client, and renders the provider and hooks without touching browser APIs', async () => {
    expect(typeof window).toBe('undefined')
    // The whole `latchkey` entry (hooks and components) is imported with the traps in place.
    vi.resetModules()
    const latchkey = await import('../index.ts')
    const html = renderToString(
      <latchkey.LatchkeyProvider
        config={{
          authProxyUrl: 'https://auth.example',
          baseUrl: 'https://api.example',
          authProxyConfigId: 'cfg',
          organizationId: 'org',
          fetch: () => Promise.reject(new Error('no network during SSR')),
        }}
      >
        <Page latchkey={latchkey} />
      </latchkey.LatchkeyProvider>,
    )
    expect(html).toBe('<main><p>signed-out</p><p>nobody</p><p>pending</p><p>pending</p></main>')
  })
})
