// @vitest-environment happy-dom
import { QueryClient } from '@tanstack/react-query'
import { act, renderHook, waitFor } from '@testing-library/react'
import type { ReactNode } from 'react'
import { verifyMessage } from 'viem'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { logout } from '../core/actions/auth/logout.ts'
import { createClientFixture } from '../core/test/fixtures.ts'
import { LatchkeyProvider } from '../react/index.ts'
import { useLatchkeyAccount } from './react.ts'

describe('useLatchkeyAccount', () => {
  it("is the signed-in user's first Ethereum account, and undefined once signed out", async () => {
    const fx = await createClientFixture()
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } })
    const wrapper = ({ children }: { children: ReactNode }) => (
      <LatchkeyProvider client={fx.client} queryClient={queryClient}>
        {children}
      </LatchkeyProvider>
    )
    await fx.signUpDirect()
    const { addresses } = await createWallet(fx.client, {
      walletName: 'Main',
      chains: ['solana', 'ethereum'],
    })
    const { result } = renderHook(() => useLatchkeyAccount(), { wrapper })
    await waitFor(() => expect(result.current?.address).toBe(addresses[1]))
    const account = result.current
    if (!account) throw new Error('no account')
    const signature = await account.signMessage({ message: 'from a hook' })
    expect(await verifyMessage({ address: account.address, message: 'from a hook', signature })).toBe(true)
    await act(() => logout(fx.client))
    await waitFor(() => expect(result.current).toBeUndefined())
  })
})
