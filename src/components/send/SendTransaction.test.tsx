import type { SendTransactionStatus } from '@latchkey/protocol'
import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import axe from 'axe-core'
import { decodeFunctionData, encodeFunctionData, erc20Abi, parseAbi, parseEther } from 'viem'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../scripts/evmNode.mjs'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createSpendingLimit } from '../../core/actions/activities/createSpendingLimit.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { sendCalls } from '../../core/actions/activities/sendCalls.ts'
import { addPasskey } from '../../core/actions/auth/addPasskey.ts'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { type RecordedSend, recordedSendService } from '../../core/test/recordedSendService.ts'
import { createLatchkey, LatchkeyProvider } from '../../react/index.ts'
import { en } from '../i18n/en.ts'
import { SENDS_METHODS, SENDS_POLICY, sendsCondition } from '../mfa/rules.ts'
import {
  createTestService,
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
  signedInClient,
} from '../test/renderWithService.tsx'
import { HIDDEN } from '../ui/hiddenChars.ts'
import { SendTransaction, type SendTransactionCall } from './SendTransaction.tsx'

// One anvil for the file's real sends (started by the first describe that needs it).
let node: EvmNode | undefined
const evmNode = async () => {
  node ??= await startEvmNode()
  return node
}
afterAll(() => node?.close())

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const SPENDER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const HASH = `0x${'ef'.repeat(32)}`

/** A signed-in user with an Ethereum account, on the local service behind the published send shapes. */
async function setUp(statuses: SendTransactionStatus[]) {
  const { service, config } = await createTestService()
  const send = recordedSendService(service.fetch as typeof fetch, () => statuses)
  const client = createLatchkey({
    ...config,
    fetch: send.fetch,
    polling: { intervalMs: 20, timeoutMs: 5_000 },
  })
  const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'ana@example.com' })
  await completeOtpSignIn(client, {
    ...started,
    otpCode: await latestCode(service, 'ana@example.com'),
    userName: 'Ana',
  })
  const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
  return { client, send, from: addresses[0] as string }
}

const approveAndTransfer: SendTransactionCall[] = [
  {
    to: TOKEN,
    abi: erc20Abi,
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [SPENDER, 5n * 10n ** 18n] }),
  },
  { to: SPENDER, value: 1_500_000_000_000_000n },
]

/** axe on the open dialog (colour contrast needs layout, which the story test checks in Chromium). */
async function axeViolations() {
  const result = await axe.run(document.body, {
    resultTypes: ['violations'],
    rules: { 'color-contrast': { enabled: false }, region: { enabled: false } },
  })
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

describe('<SendTransaction/>', () => {
  it('shows each call decoded, sends the sponsored batch, follows the status to included, focus following', async () => {
    const user = userEvent.setup()
    const { client, send, from } = await setUp([
      { txStatus: 'PENDING' },
      { txStatus: 'BROADCASTED', eth: { txHash: HASH } },
      { txStatus: 'INCLUDED', eth: { txHash: HASH } },
    ])
    const settled: string[] = []
    render(
      <LatchkeyProvider client={client}>
        <SendTransaction
          decodeFunctionData={decodeFunctionData}
          open
          onOpenChange={() => {}}
          calls={approveAndTransfer}
          caip2="eip155:31337"
          sponsor
          pollingIntervalMs={20}
          onSettled={(s) => settled.push(s.status)}
        />
      </LatchkeyProvider>,
    )
    expect(await screen.findByRole('heading', { name: 'Review transaction' })).toBeTruthy()
    expect(await screen.findByText(from)).toBeTruthy()
    expect(screen.getByText('Sponsored')).toBeTruthy()
    const first = screen.getByRole('listitem', { name: 'Call 1' })
    const second = screen.getByRole('listitem', { name: 'Call 2' })
    expect(await within(first).findByText(`approve(${SPENDER}, 5000000000000000000)`)).toBeTruthy()
    expect(within(first).getByText('0 ETH')).toBeTruthy()
    expect(within(second).getByText('0.0015 ETH')).toBeTruthy()
    expect(await axeViolations()).toEqual([])

    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    expect(await screen.findByRole('heading', { name: 'Transaction confirmed' })).toBeTruthy()
    // Shown once (the heading); the status line that announces it is for screen readers only.
    expect(screen.getByRole('status')).toHaveProperty('textContent', 'Transaction confirmed')
    expect(
      screen.getAllByText('Transaction confirmed').filter((e) => !e.closest('.lk-visually-hidden')),
    ).toHaveLength(1)
    expect(screen.getByText(HASH)).toBeTruthy()
    // Focus moved to the new step's action.
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Done' })))
    expect(await axeViolations()).toEqual([])
    expect(settled).toEqual(['success'])
    expect(send.sends.map((s: RecordedSend) => s.parameters)).toEqual([
      {
        from,
        caip2: 'eip155:31337',
        sponsor: true,
        calls: [
          { to: TOKEN, data: approveAndTransfer[0]?.data },
          { to: SPENDER, value: '1500000000000000' },
        ],
      },
    ])
    // Final: no more reads once included.
    const reads = send.reads.get(send.sends[0]?.sendTransactionStatusId as string)
    await new Promise((r) => setTimeout(r, 120))
    expect(send.reads.get(send.sends[0]?.sendTransactionStatusId as string)).toBe(reads)
  })

  it('a send that waits longer than usual says so, in the status a screen reader hears, until it is final', async () => {
    const user = userEvent.setup()
    const { client, send, from } = await setUp([{ txStatus: 'BROADCASTED', eth: { txHash: HASH } }])
    render(
      <LatchkeyProvider client={client}>
        <SendTransaction
          open
          onOpenChange={() => {}}
          calls={[{ to: SPENDER, value: 1n }]}
          caip2="eip155:31337"
          pollingIntervalMs={20}
          slowAfterMs={300}
        />
      </LatchkeyProvider>,
    )
    await screen.findByText(from)
    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    expect(await screen.findByRole('heading', { name: 'Transaction sent' })).toBeTruthy()
    const status = screen.getByRole('status')
    expect(status.textContent).toBe('Waiting for the network to include it…')
    await waitFor(() =>
      expect(status.textContent).toBe(
        'Taking longer than usual. It is still on its way, and this window will show how it ends.',
      ),
    )
    expect(await axeViolations()).toEqual([])
    // Included at last: the outcome replaces it.
    send.statuses.set(send.sends[0]!.sendTransactionStatusId, [
      { txStatus: 'INCLUDED', eth: { txHash: HASH } },
    ])
    expect(await screen.findByRole('heading', { name: 'Transaction confirmed' })).toBeTruthy()
    expect(screen.getByRole('status').textContent).toBe('Transaction confirmed')
  })

  it('shows a failed send with its reason, and Cancel closes the review', async () => {
    const user = userEvent.setup()
    const { client, from } = await setUp([
      { txStatus: 'FAILED', eth: { txHash: HASH }, error: { message: 'ERC20InsufficientBalance' } },
    ])
    const changes: boolean[] = []
    const { rerender } = render(
      <LatchkeyProvider client={client}>
        <SendTransaction
          open
          onOpenChange={(o) => changes.push(o)}
          calls={[{ to: SPENDER }]}
          caip2="eip155:1"
        />
      </LatchkeyProvider>,
    )
    expect(await screen.findByText('Paid from this account')).toBeTruthy()
    await user.click(screen.getByRole('button', { name: 'Cancel' }))
    expect(changes).toEqual([false])
    rerender(
      <LatchkeyProvider client={client}>
        <SendTransaction open onOpenChange={() => {}} calls={[{ to: SPENDER }]} caip2="eip155:1" />
      </LatchkeyProvider>,
    )
    // Confirm sends once the account it pays from is known (it is disabled until then).
    await screen.findByText(from)
    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    expect(await screen.findByRole('heading', { name: 'Transaction failed' })).toBeTruthy()
    expect(screen.getByRole('alert').textContent).toContain('ERC20InsufficientBalance')
    expect(await axeViolations()).toEqual([])
  })

  it("shows a contract's revert reason as text: a URL in it is no link in the wallet's dialog", async () => {
    const user = userEvent.setup()
    // What the service answers for a call that reverted with the contract's own Error(string).
    const reason =
      'the transaction reverted: Tokens locked for your safety. Verify your wallet at https://latchkey-support.example/verify to unlock'
    const { client, from } = await setUp([
      { txStatus: 'FAILED', eth: { txHash: HASH }, error: { message: reason } },
    ])
    render(
      <LatchkeyProvider client={client}>
        <SendTransaction
          open
          onOpenChange={() => {}}
          calls={[{ to: TOKEN, data: '0xa9059cbb' }]}
          caip2="eip155:1"
        />
      </LatchkeyProvider>,
    )
    await screen.findByText(from)
    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    expect(await screen.findByRole('heading', { name: 'Transaction failed' })).toBeTruthy()
    const alert = screen.getByRole('alert')
    expect(alert.textContent).toBe(reason)
    expect(alert.querySelectorAll('a, code')).toHaveLength(0)
  })
})

// issue 37: the allowance left and a refusal in words, against a real limit on a real send (anvil).
/**
 * A decoded string argument is text the page chose: "pay.\u202Eevil\u202C.eth" read "pay.live.eth"
 * on screen with the override applied. Each such character is a marked U+XXXX, with a warning.
 */
describe('<SendTransaction/> and decoded arguments that read differently on screen', () => {
  it('marks bidi and zero-width characters of the function and its arguments, and warns', async () => {
    const { client, render } = await signedInClient()
    await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const abi = parseAbi(['function setPayee(string payee)'])
    const data = encodeFunctionData({ abi, functionName: 'setPayee', args: ['pay.\u202Eevil\u202C.eth'] })
    render(
      <SendTransaction
        decodeFunctionData={decodeFunctionData}
        open
        onOpenChange={() => {}}
        calls={[{ to: '0x000000000000000000000000000000000000c0de', abi, data }, ...approveAndTransfer]}
        caip2="eip155:31337"
      />,
    )
    const call = await screen.findByRole('listitem', { name: 'Call 1' })
    const shown = (await within(call).findByText(/^setPayee\(/)).textContent ?? ''
    expect(HIDDEN.test(shown)).toBe(false)
    expect(shown).toBe(`setPayee(pay.${en.hiddenChar} U+202Eevil${en.hiddenChar} U+202C.eth)`)
    expect(screen.getByText(en.hiddenCharsWarning)).toBeTruthy()
    // The other calls, without such characters, have no mark.
    const approve = await screen.findByRole('listitem', { name: 'Call 2' })
    expect(await within(approve).findByText(/^approve\(/)).toBeTruthy()
    expect(approve.querySelector('[data-lk-hidden-char]')).toBeNull()
    expect(await axeViolations()).toEqual([])
  })

  it('shows no warning when no decoded call holds such a character', async () => {
    const { client, render } = await signedInClient()
    await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    render(
      <SendTransaction
        decodeFunctionData={decodeFunctionData}
        open
        onOpenChange={() => {}}
        calls={approveAndTransfer}
        caip2="eip155:31337"
      />,
    )
    expect(await screen.findByText(/^approve\(/)).toBeTruthy()
    expect(screen.queryByText(en.hiddenCharsWarning)).toBeNull()
    expect(document.querySelector('[data-lk-hidden-char]')).toBeNull()
  })
})

describe('<SendTransaction/> under a spending limit', () => {
  let node: EvmNode
  beforeAll(async () => {
    node = await evmNode()
  })

  it('shows what is left today and when it frees, then the refusal with the numbers', async () => {
    const user = userEvent.setup()
    const { service, config } = await createTestService({ rpc: { 'eip155:31337': node.url } })
    const client = createLatchkey({ ...config, polling: { intervalMs: 20, timeoutMs: 5_000 } })
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'ana@example.com' })
    await completeOtpSignIn(client, {
      ...started,
      otpCode: await latestCode(service, 'ana@example.com'),
      userName: 'Ana',
    })
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const from = addresses[0] as string
    await node.rpc('anvil_setBalance', [from, '0xde0b6b3a7640000'])
    await createSpendingLimit(client, {
      spendingLimitName: 'daily',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: from },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:31337' },
      amount: '10000000000000000',
    })
    // 0.008 ETH in all: the value, and the most its gas can cost (the limit counts both): 21,000
    // gas at up to 2 gwei, raised 25% by each of the up to 3 replacements the service may sign.
    const fee = 21_000n * 3_906_250_000n
    await sendCalls(client, {
      from,
      caip2: 'eip155:31337',
      calls: [{ to: SPENDER, value: String(8_000_000_000_000_000n - fee) }],
      gasLimit: '21000',
      maxFeePerGas: '2000000000',
    })
    render(
      <LatchkeyProvider client={client}>
        <SendTransaction
          open
          onOpenChange={() => {}}
          calls={[{ to: SPENDER, value: 3_000_000_000_000_000n }]}
          caip2="eip155:31337"
        />
      </LatchkeyProvider>,
    )
    // 0.008 ETH used until the send is mined and settled, then its value and the fee it paid (the
    // rest of the most its gas could cost given back), whenever the service's worker gets to it:
    // either way used and left make the limit, and the send's value and fee are used.
    const leftToday = await screen.findByText(/^0\.00\d+\sETH left today$/)
    expect(leftToday.textContent).toMatch(/^0\.002\d*\sETH left today$/)
    const frees = screen.getByText(/^frees at /)
    expect(frees.textContent).toMatch(/^frees at [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}/)
    expect(await axeViolations()).toEqual([])
    // As a browser does (jsdom does not): a focused button that becomes disabled loses focus to
    // <body>. jsdom will not blur a disabled element, so the button is enabled for the blur.
    const dropFocus = new MutationObserver(() => {
      const active = document.activeElement as HTMLButtonElement | null
      if (!active?.disabled) return
      active.disabled = false
      active.blur()
      active.disabled = true
    })
    dropFocus.observe(document.body, { attributes: true, attributeFilter: ['disabled'], subtree: true })
    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    const alert = await screen.findByRole('alert')
    // Its 0.003 ETH and the most its gas can cost (the node's fee, so not a round figure). Each
    // amount holds to its unit with a no-break space: a narrow line never splits the two.
    const refusal = alert.textContent?.match(
      /^This would exceed your daily limit of 0\.01\u00a0ETH: (0\.00[78]\d*)\u00a0ETH used, (0\.002\d*)\u00a0ETH left, and with its network fee this send needs up to 0\.003\d+\u00a0ETH\. Enough frees in 24 hours\.$/,
    )
    expect(refusal, alert.textContent ?? '').toBeTruthy()
    const [used, left] = [parseEther(refusal![1]!), parseEther(refusal![2]!)]
    expect(used + left).toBe(10_000_000_000_000_000n)
    // At most what was counted at signing; at least the value and the 21,000 gas at 1 wei.
    expect(used <= 8_000_000_000_000_000n && used >= 8_000_000_000_000_000n - fee + 21_000n).toBe(true)
    // Confirm was disabled while it sent; focus is not left on <body> but back on it, now "Try again".
    const retry = screen.getByRole('button', { name: 'Try again' })
    await waitFor(() => expect(document.activeElement).toBe(retry))
    dropFocus.disconnect()
    expect(await axeViolations()).toEqual([])
  })
})

// issue 38: "sends above 0.1 ETH need a passkey", against a real send on anvil and the software
// authenticator behind navigator.credentials.
describe('<SendTransaction/> under an MFA policy on sends', () => {
  let node: EvmNode
  let authenticator: SoftAuthenticator | undefined
  let close: (() => Promise<void>) | undefined
  beforeAll(async () => {
    node = await evmNode()
  })
  afterEach(async () => {
    authenticator?.uninstall()
    authenticator = undefined
    // Its send worker stops before the node does.
    await close?.()
    close = undefined
  })

  /** A user with a passkey and a funded account, under "sends above 0.1 ETH need a passkey". */
  async function userWithSendsRule(wei: bigint) {
    authenticator = installSoftAuthenticator()
    const { service, config } = await createTestService({ rpc: { 'eip155:31337': node.url } })
    close = () => service.close()
    const client = createLatchkey({ ...config, polling: { intervalMs: 20, timeoutMs: 5_000 } })
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'ana@example.com' })
    await completeOtpSignIn(client, {
      ...started,
      otpCode: await latestCode(service, 'ana@example.com'),
      userName: 'Ana',
    })
    // The passkey first: once a policy is on, adding one waits for it.
    await addPasskey(client, { authenticatorName: 'Laptop' })
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    await node.rpc('anvil_setBalance', [addresses[0], '0xde0b6b3a7640000'])
    await createMfaPolicy(client, {
      mfaPolicyName: SENDS_POLICY,
      condition: sendsCondition(100_000_000_000_000_000n),
      requiredAuthenticationMethods: SENDS_METHODS,
      order: 0,
    })
    const user = userEvent.setup()
    render(
      <LatchkeyProvider client={client}>
        <SendTransaction
          open
          onOpenChange={() => {}}
          calls={[{ to: SPENDER, value: wei }]}
          caip2="eip155:31337"
        />
      </LatchkeyProvider>,
    )
    // Confirm sends once the account it pays from is known.
    await screen.findByText(addresses[0] as string, {}, { timeout: 10_000 })
    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    const sends = async () =>
      (await service.store.all('activities')).filter((row) => row.path === 'eth_send_transaction')
    const signatures = () => authenticator!.credentials[0]!.counter
    return { user, sends, signatures }
  }

  it('a send above the amount asks for the passkey (only), and goes once it signs', async () => {
    const { user, sends, signatures } = await userWithSendsRule(200_000_000_000_000_000n)
    const passkey = await screen.findByRole('button', { name: 'Use a passkey' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(passkey))
    expect(screen.getByText('Use your passkey to continue.')).toBeTruthy()
    expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull()
    expect((await sends()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])
    const before = signatures()
    expect(await axeViolations()).toEqual([])

    // Keyboard only: Enter on the focused button signs with the passkey.
    await user.keyboard('{Enter}')
    expect(
      await screen.findByRole('heading', { name: /^Transaction (sent|confirmed)$/ }, { timeout: 10_000 }),
    ).toBeTruthy()
    expect(signatures()).toBeGreaterThan(before)
    expect((await sends()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_COMPLETED'])
  })

  it('a send below the amount goes at once, without the passkey', async () => {
    const { sends, signatures } = await userWithSendsRule(50_000_000_000_000_000n)
    const before = signatures()
    expect(
      await screen.findByRole('heading', { name: /^Transaction (sent|confirmed)$/ }, { timeout: 10_000 }),
    ).toBeTruthy()
    expect(screen.queryByRole('button', { name: 'Use a passkey' })).toBeNull()
    expect(signatures()).toBe(before)
    expect((await sends()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_COMPLETED'])
  })
})
