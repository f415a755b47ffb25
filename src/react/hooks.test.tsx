import { latestCode } from '@latchkey/service/testing'
import { QueryClient } from '@tanstack/react-query'
import { act, render, renderHook, screen, waitFor } from '@testing-library/react'
import { type ReactNode, useState } from 'react'
import { describe, expect, it, vi } from 'vitest'
import { createClientFixture } from '../core/test/fixtures.ts'
import {
  LatchkeyProvider,
  LatchkeyProviderNotFoundError,
  useCreateWallet,
  useLatchkey,
  useLogout,
  useOtpSignIn,
  useSession,
  useSessionStatus,
  useSessions,
  useSignMessage,
  useSwitchSession,
  useUser,
  useWalletAccounts,
  useWalletKitConfig,
  useWallets,
  useWhoami,
} from './index.ts'

type Fixture = Awaited<ReturnType<typeof createClientFixture>>

function Providers({ fx, children }: { fx: Fixture; children?: ReactNode }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: false } } }))
  return (
    <LatchkeyProvider client={fx.client} queryClient={queryClient}>
      {children}
    </LatchkeyProvider>
  )
}

const wrapperOf =
  (fx: Fixture) =>
  ({ children }: { children: ReactNode }) => <Providers fx={fx}>{children}</Providers>

const renders = { status: 0, other: 0 }
function Status() {
  renders.status++
  return <p>{useSessionStatus()}</p>
}
function Other() {
  renders.other++
  useLatchkey()
  return <p>other</p>
}

describe('react hooks', () => {
  it('throws a named error outside the provider (unless given a client)', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined)
    expect(() => renderHook(() => useLatchkey())).toThrow(LatchkeyProviderNotFoundError)
    const fx = await createClientFixture()
    expect(renderHook(() => useLatchkey({ client: fx.client })).result.current).toBe(fx.client)
    vi.restoreAllMocks()
  })

  it('reads wallet_kit_config without a session', async () => {
    const fx = await createClientFixture()
    const { result } = renderHook(() => useWalletKitConfig(), { wrapper: wrapperOf(fx) })
    await waitFor(() => expect(result.current.isSuccess).toBe(true))
    expect(result.current.data).toMatchObject({
      organizationId: fx.harness.organizationId,
      sessionExpirationSeconds: '900',
    })
    expect(result.current.data?.enabledProviders).toContain('email')
  })

  it('signs in by e-mail in two steps, then wallet queries follow the session and mutations invalidate them', async () => {
    const fx = await createClientFixture()
    const wrapper = wrapperOf(fx)
    const { result } = renderHook(
      () => ({
        otp: useOtpSignIn(),
        session: useSession(),
        wallets: useWallets(),
        create: useCreateWallet(),
        user: useUser(),
      }),
      { wrapper },
    )
    expect(result.current.otp.step).toBe('contact')
    expect(result.current.wallets.fetchStatus).toBe('idle') // disabled while signed out
    const contact = 'hooks@example.com'
    await act(() => result.current.otp.sendCode.mutateAsync({ otpType: 'OTP_TYPE_EMAIL', contact }))
    await waitFor(() => expect(result.current.otp.step).toBe('code'))
    const otpCode = await latestCode(fx.harness.service, contact)
    await act(() => result.current.otp.verifyCode.mutateAsync({ otpCode, userName: 'Hooks' }))
    await waitFor(() => expect(result.current.otp.step).toBe('done'))
    expect(result.current.session).toMatchObject({ status: 'active', method: 'otp', label: contact })
    await waitFor(() => expect(result.current.wallets.data).toEqual({ wallets: [] }))
    await waitFor(() => expect(result.current.user.data?.user.userName).toBe('Hooks'))
    await act(() => result.current.create.mutateAsync({ walletName: 'Main', chains: ['ethereum'] }))
    await waitFor(() =>
      expect(result.current.wallets.data?.wallets.map((w) => w.walletName)).toEqual(['Main']),
    )
  })

  it('signs messages and switches sessions; queries re-key by session', async () => {
    const fx = await createClientFixture()
    const a = await fx.signUpDirect()
    const b = await fx.signUpDirect()
    const { result } = renderHook(
      () => ({
        whoami: useWhoami(),
        switchTo: useSwitchSession(),
        sessions: useSessions(),
        sign: useSignMessage(),
        accounts: useWalletAccounts(),
      }),
      { wrapper: wrapperOf(fx) },
    )
    await waitFor(() => expect(result.current.whoami.data?.organizationId).toBe(b.organizationId))
    expect(Object.keys(result.current.sessions).sort()).toEqual([a.sessions[0]?.id, b.sessions[0]?.id].sort())
    act(() => result.current.switchTo(a.sessions[0]?.id as string))
    await waitFor(() => expect(result.current.whoami.data?.organizationId).toBe(a.organizationId))
  })

  it('re-renders only the components that read the session when it changes', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    render(
      <LatchkeyProvider client={fx.client}>
        <Status />
        <Other />
      </LatchkeyProvider>,
    )
    await waitFor(() => screen.getByText('active'))
    const before = { ...renders }
    const id = fx.client.store.getState().activeId as string
    // A timer tick: the warning transition of the active session.
    const { dispatchSessionEvent } = await import('../core/session/createSessionStore.ts')
    act(() => dispatchSessionEvent(fx.client.store, id, { type: 'WARN' }))
    await screen.findByText('expiring')
    expect(renders.status).toBe(before.status + 1)
    expect(renders.other).toBe(before.other)
  })

  it('logs out through the hook: key revoked, state signed-out', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const { result } = renderHook(() => ({ logout: useLogout(), status: useSessionStatus() }), {
      wrapper: wrapperOf(fx),
    })
    await act(() => result.current.logout.mutateAsync())
    await waitFor(() => expect(result.current.logout.data).toMatchObject({ revoked: true }))
    expect(result.current.status).toBe('signed-out')
  })
})
