import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { act, render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import {
  connect,
  http as coreHttp,
  createConfig as createCoreConfig,
  disconnect,
  getConnection,
} from '@wagmi/core'
import { defineChain, verifyMessage } from 'viem'
import { describe, expect, it } from 'vitest'
import { createConfig, createStorage, http, useConnection, useSignMessage, WagmiProvider } from 'wagmi'
import { AuthModal } from '../components/auth/AuthModal.tsx'
import { createTestService, latestCode } from '../components/test/renderWithService.tsx'
import { createWallet } from '../core/actions/activities/createWallet.ts'
import { completeOtpSignIn } from '../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../core/actions/auth/startOtpSignIn.ts'
import { getWalletAccounts } from '../core/actions/queries/getWalletAccounts.ts'
import type { Latchkey } from '../core/createLatchkey.ts'
import { dispatchSessionEvent } from '../core/session/createSessionStore.ts'
import { switchSession } from '../core/session/sessions.ts'
import { memoryStorage } from '../core/test/fixtures.ts'
import { createLatchkey, LatchkeyProvider, useLogout } from '../react/index.ts'
import { latchkey as coreLatchkey } from './core.ts'
import { latchkey } from './index.ts'

// No node behind it: these tests never reach the chain (the provider answers eth_chainId itself).
const chain = defineChain({
  id: 31337,
  name: 'Local',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['http://127.0.0.1:9/'] } },
})

function Connection() {
  const connection = useConnection()
  const logout = useLogout()
  const sign = useSignMessage()
  return (
    <section>
      <p data-testid="status">{connection.status}</p>
      <p data-testid="address">{connection.address ?? 'none'}</p>
      <p data-testid="addresses">{connection.addresses?.length ?? 0}</p>
      <button type="button" onClick={() => logout.mutate()}>
        Sign out here
      </button>
      <button type="button" onClick={() => sign.mutate({ message: 'gm from wagmi' })}>
        Sign with wagmi
      </button>
      {sign.data ? <p data-testid="signature">{sign.data}</p> : null}
    </section>
  )
}

/** A page load: one kit client and one wagmi config over the shared service and browser storage. */
function createPage(
  setup: Awaited<ReturnType<typeof createTestService>>,
  storage: Awaited<ReturnType<typeof memoryStorage>>,
) {
  const client = createLatchkey({ ...setup.config, storage })
  const queryClient = new QueryClient()
  const wagmiConfig = createConfig({
    chains: [chain],
    connectors: [latchkey({ client, createWallet: { walletName: 'Main' } })],
    transports: { [chain.id]: http() },
    multiInjectedProviderDiscovery: false,
    storage: createStorage({ storage }),
  })
  const ui = (
    <WagmiProvider config={wagmiConfig}>
      <QueryClientProvider client={queryClient}>
        <LatchkeyProvider client={client} queryClient={queryClient}>
          <AuthModal />
          <Connection />
        </LatchkeyProvider>
      </QueryClientProvider>
    </WagmiProvider>
  )
  return { client, wagmiConfig, render: () => render(ui) }
}

const ethereumAddressesOf = async (client: Latchkey) =>
  (await getWalletAccounts(client, {})).accounts
    .filter((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
    .map((a) => a.address.toLowerCase())

async function signInThroughModal(
  service: Awaited<ReturnType<typeof createTestService>>['service'],
  email: string,
) {
  const user = userEvent.setup()
  await user.click(screen.getByRole('button', { name: 'Sign in' }))
  await user.type(await screen.findByRole('textbox', { name: 'Email address' }), email)
  await user.click(screen.getByRole('button', { name: 'Continue' }))
  await screen.findByRole('heading', { name: 'Enter the code' })
  await user.click(screen.getByRole('textbox', { name: 'Digit 1 of 6' }))
  await user.paste(await latestCode(service, email))
  return user
}

const status = () => screen.getByTestId('status').textContent
const address = () => screen.getByTestId('address').textContent ?? ''

describe('latchkey/wagmi: a connector that follows the kit’s sessions', () => {
  it('connects on <AuthModal/> sign-in without useConnect, signs through wagmi, disconnects on sign-out', async () => {
    const setup = await createTestService()
    const page = createPage(setup, memoryStorage())
    page.render()
    await waitFor(() => expect(status()).toBe('disconnected'))

    const user = await signInThroughModal(setup.service, 'ana@example.com')
    await waitFor(() => expect(status()).toBe('connected'), { timeout: 10_000 })
    // The connector gave the new user a wallet; wagmi shows its Ethereum account.
    expect(await ethereumAddressesOf(page.client)).toEqual([address().toLowerCase()])
    expect(page.wagmiConfig.state.connections.size).toBe(1)

    await user.click(screen.getByRole('button', { name: 'Sign with wagmi' }))
    const signature = (await screen.findByTestId('signature')).textContent as `0x${string}`
    expect(
      await verifyMessage({ address: address() as `0x${string}`, message: 'gm from wagmi', signature }),
    ).toBe(true)

    await user.click(screen.getByRole('button', { name: 'Sign out here' }))
    await waitFor(() => expect(status()).toBe('disconnected'))
    expect(address()).toBe('none')
  })

  it('reconnects after a reload with a live session, without a prompt', async () => {
    const setup = await createTestService()
    const storage = memoryStorage()
    const first = createPage(setup, storage)
    const view = first.render()
    await signInThroughModal(setup.service, 'ana@example.com')
    await waitFor(() => expect(status()).toBe('connected'), { timeout: 10_000 })
    const before = address()
    view.unmount()
    first.client.destroy()

    const second = createPage(setup, storage)
    second.render()
    await waitFor(() => expect(status()).toBe('connected'), { timeout: 10_000 })
    expect(address()).toBe(before)
    expect(screen.queryByRole('dialog')).toBeNull()
  })

  it('on @wagmi/core alone (no React, latchkey/wagmi/core): connect() asks signIn when signed out, fails with 4001 without it; disconnect() signs out', async () => {
    const setup = await createTestService()
    const client = createLatchkey({ ...setup.config, storage: memoryStorage() })
    const configWith = (signIn?: () => Promise<unknown>) =>
      createCoreConfig({
        chains: [chain],
        connectors: [coreLatchkey({ client, signIn, createWallet: { walletName: 'Main' } })],
        transports: { [chain.id]: coreHttp() },
        multiInjectedProviderDiscovery: false,
        storage: null,
      })

    const without = configWith()
    const refused = await connect(without, { connector: without.connectors[0]! }).catch((e: unknown) => e)
    expect(refused).toMatchObject({ code: 4001 })
    expect(getConnection(without).status).toBe('disconnected')

    let asked = 0
    const withSignIn = configWith(async () => {
      asked++
      const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'cy@example.com' })
      await completeOtpSignIn(client, {
        ...started,
        otpCode: await latestCode(setup.service, 'cy@example.com'),
      })
    })
    const { accounts } = await connect(withSignIn, { connector: withSignIn.connectors[0]! })
    expect(asked).toBe(1)
    expect(accounts.map((a) => a.toLowerCase())).toEqual(await ethereumAddressesOf(client))
    expect(getConnection(withSignIn).status).toBe('connected')

    await disconnect(withSignIn)
    expect(client.store.getState().status).toBe('signed-out')
    client.destroy()
  })

  it('follows a switch of session and an expired session', async () => {
    const setup = await createTestService()
    const page = createPage(setup, memoryStorage())
    page.render()
    await signInThroughModal(setup.service, 'ana@example.com')
    await waitFor(() => expect(status()).toBe('connected'), { timeout: 10_000 })
    const ana = address()
    const anaSession = page.client.store.getState().activeId as string

    // A wallet made after sign-in: refreshAccounts() announces it and wagmi lists both accounts.
    await act(async () => {
      await createWallet(page.client, { walletName: 'Second', chains: ['ethereum'] })
      const provider = await page.wagmiConfig.connectors[0]!.getProvider()
      await (provider as { refreshAccounts(): Promise<unknown> }).refreshAccounts()
    })
    await waitFor(() => expect(screen.getByTestId('addresses').textContent).toBe('2'))
    expect(address()).toBe(ana)

    // A second account signs in beside the first (core actions, as any sign-in path would).
    await act(async () => {
      const started = await startOtpSignIn(page.client, {
        otpType: 'OTP_TYPE_EMAIL',
        contact: 'bob@example.com',
      })
      await completeOtpSignIn(page.client, {
        ...started,
        otpCode: await latestCode(setup.service, 'bob@example.com'),
      })
    })
    // Bob has no wallet yet: wagmi lets Ana's account go, then shows Bob's new one.
    await waitFor(
      () => {
        expect(address()).toMatch(/^0x[0-9a-fA-F]{40}$/)
        expect(address()).not.toBe(ana)
      },
      { timeout: 10_000 },
    )
    expect(await ethereumAddressesOf(page.client)).toEqual([address().toLowerCase()])
    expect(status()).toBe('connected')

    act(() => void switchSession(page.client, { sessionId: anaSession }))
    await waitFor(() => expect(address()).toBe(ana))

    act(() => dispatchSessionEvent(page.client.store, anaSession, { type: 'EXPIRE' }))
    await waitFor(() => expect(status()).toBe('disconnected'))
  })
})
