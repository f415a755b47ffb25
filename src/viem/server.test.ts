import { verifyMessage } from 'viem'
import { describe, expect, it, vi } from 'vitest'

// As in a Server Component or route handler, where React's client APIs (createContext, hooks) are
// missing: a module of latchkey/viem that loads React fails to import.
vi.mock('react', () => {
  throw new Error('React is not available in server code')
})

describe('latchkey/viem on the server', () => {
  it('imports without React, and its account signs', async () => {
    const viem = await import('./index.ts')
    expect(Object.keys(viem)).not.toContain('useLatchkeyAccount')
    const { createClientFixture } = await import('../core/test/fixtures.ts')
    const { createWallet } = await import('../core/actions/activities/createWallet.ts')
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const { addresses } = await createWallet(fx.client, { walletName: 'Server', chains: ['ethereum'] })
    const address = addresses[0] as `0x${string}`
    const account = viem.toLatchkeyAccount(fx.client, { address })
    const signature = await account.signMessage({ message: 'from a route handler' })
    expect(await verifyMessage({ address, message: 'from a route handler', signature })).toBe(true)
  })

  it('the hook is in latchkey/viem/react, a client module that does load React', async () => {
    // vitest wraps the mock's error; its cause is the mock's.
    const failure = await import('./react.ts').then(
      () => undefined,
      (error: Error) => error,
    )
    expect((failure?.cause as Error | undefined)?.message).toBe('React is not available in server code')
    const { readFileSync } = await import('node:fs')
    expect(readFileSync(new URL('./react.ts', import.meta.url), 'utf8').startsWith("'use client'\n")).toBe(
      true,
    )
  })
})
