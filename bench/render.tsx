/**
 * `npm run bench:render`: render cost measured with the React Profiler. A signed-in page (the
 * drop-in components plus small components that each read one thing) sits still while, one at a
 * time: the session countdown ticks, the session timer moves the session to `expiring`, an
 * unrelated session is added to the store, and an unrelated query is written. Prints the commits
 * of every component per event and checks that only the components that read the change
 * re-render. Prints figures; it is a benchmark, not part of `npm test`.
 */

import { createTestService, latestCode } from '@latchkey/service/testing'
import { QueryClient } from '@tanstack/react-query'
import { act, render, screen } from '@testing-library/react'
import { Profiler, type ReactNode } from 'react'
import { expect, test } from 'vitest'
import { completeOtpSignIn, createLatchkey, createWallet, startOtpSignIn } from '../src/core/index.ts'
import { dispatchSessionEvent } from '../src/core/session/createSessionStore.ts'
import {
  AuthModal,
  LatchkeyProvider,
  SessionStatus,
  UserProfile,
  useSessionStatus,
  useUser,
  useWallets,
  WalletList,
} from '../src/index.ts'
import { printTable } from './printTable.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const commits = new Map<string, number>()
function Measured({ id, children }: { id: string; children: ReactNode }) {
  return (
    <Profiler id={id} onRender={() => commits.set(id, (commits.get(id) ?? 0) + 1)}>
      {children}
    </Profiler>
  )
}

/** Reads nothing from Latchkey. */
function Static() {
  return <p>static</p>
}
/** Reads the session status only. */
function StatusBadge() {
  return <span>{useSessionStatus()}</span>
}
/** Reads the user query only. */
function UserEmail() {
  return <span>{useUser().data?.user.userEmail ?? '…'}</span>
}
/** Reads the wallets query only. */
function WalletCount() {
  return <span>{useWallets().data?.wallets.length ?? '…'} wallets</span>
}

const COMPONENTS = [
  ['Static', <Static key="Static" />],
  ['StatusBadge (useSessionStatus)', <StatusBadge key="StatusBadge" />],
  ['UserEmail (useUser)', <UserEmail key="UserEmail" />],
  ['WalletCount (useWallets)', <WalletCount key="WalletCount" />],
  ['<SessionStatus/>', <SessionStatus key="SessionStatus" />],
  ['<UserProfile/>', <UserProfile key="UserProfile" />],
  ['<WalletList/>', <WalletList key="WalletList" />],
  ['<AuthModal/>', <AuthModal key="AuthModal" />],
] as const

/** Which components may re-render on each event (the ones that read what changed). */
const EXPECTED: Record<string, readonly string[]> = {
  'countdown tick (1 s)': ['<SessionStatus/>'],
  'unrelated query written': [],
  'another session added (not active)': ['<UserProfile/>'],
}

test('render counts per component', async () => {
  const { service, clientConfig } = await createTestService()
  const client = createLatchkey({
    ...clientConfig,
    storage: null,
    session: { autoRefresh: false },
  })
  const queryClient = new QueryClient()
  const email = 'render@example.com'
  const pending = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
  const otpCode = await latestCode(service, email)
  const { session } = await completeOtpSignIn(client, { ...pending, otpCode })
  await createWallet(client, { walletName: 'Render bench' })

  render(
    <LatchkeyProvider client={client} queryClient={queryClient}>
      {COMPONENTS.map(([id, element]) => (
        <Measured key={id} id={id}>
          {element}
        </Measured>
      ))}
    </LatchkeyProvider>,
  )
  // The profile and the modal's trigger both show the signed-in account.
  await screen.findAllByText(email)
  await screen.findByText('1 wallets')
  await act(() => sleep(300))
  const mounted = new Map(commits)

  const events: [string, () => Promise<void>][] = [
    // SessionStatus's countdown: 1 s interval, local state.
    ['countdown tick (1 s)', async () => void (await act(() => sleep(1_050)))],
    // What the warning timer does at `expiresAt - warningLeadMs`.
    [
      'session timer: active → expiring',
      async () => act(() => dispatchSessionEvent(client.store, session.id, { type: 'WARN' })),
    ],
    [
      'unrelated query written',
      async () => act(() => void queryClient.setQueryData(['elsewhere'], { n: 1 })),
    ],
    [
      'another session added (not active)',
      async () =>
        act(() =>
          client.store.setState((state) => ({
            sessions: { ...state.sessions, other: { ...session, id: 'other', label: 'other@example.com' } },
          })),
        ),
    ],
  ]
  const afterNextTick = async () => {
    const ticks = commits.get('<SessionStatus/>') ?? 0
    const deadline = Date.now() + 2_000
    while ((commits.get('<SessionStatus/>') ?? 0) === ticks && Date.now() < deadline)
      await act(() => sleep(5))
  }
  const perEvent = new Map<string, Map<string, number>>()
  for (const [name, run] of events) {
    // Start other events just after a countdown tick, so no tick falls inside their window.
    if (name !== 'countdown tick (1 s)') await afterNextTick()
    const before = new Map(commits)
    const started = Date.now()
    await run()
    // Events other than the tick are measured over a window shorter than one tick.
    if (Date.now() - started < 100) await act(() => sleep(20))
    perEvent.set(
      name,
      new Map(COMPONENTS.map(([id]) => [id, (commits.get(id) ?? 0) - (before.get(id) ?? 0)])),
    )
  }
  client.destroy()
  await service.close()

  console.log('\nbench:render: React Profiler commits per component (happy-dom, development React)\n')
  printTable(
    ['component', 'mount (+ data load)', ...events.map(([name]) => name)],
    COMPONENTS.map(([id]) => [
      id,
      String(mounted.get(id) ?? 0),
      ...events.map(([name]) => String(perEvent.get(name)?.get(id) ?? 0)),
    ]),
  )
  for (const [name, allowed] of Object.entries(EXPECTED)) {
    const rerendered = [...(perEvent.get(name) ?? [])].filter(([, n]) => n > 0).map(([id]) => id)
    expect({ event: name, rerendered: rerendered.filter((id) => !allowed.includes(id)) }).toEqual({
      event: name,
      rerendered: [],
    })
  }
  expect(perEvent.get('countdown tick (1 s)')?.get('<SessionStatus/>')).toBeGreaterThan(0)
  expect(perEvent.get('session timer: active → expiring')?.get('Static')).toBe(0)
})
