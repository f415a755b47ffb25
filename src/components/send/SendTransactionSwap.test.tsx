/**
 * <SendTransaction/> shows the calls it sends: when the page swaps `calls` while the review is
 * open, the previous batch's decoded functions go (it once kept showing `transfer(friend, 1)`
 * while Confirm sent `approve(attacker, 2^256-1)`).
 */
import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { decodeFunctionData, encodeFunctionData, erc20Abi, maxUint256 } from 'viem'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { recordedSendService } from '../../core/test/recordedSendService.ts'
import { createLatchkey, LatchkeyProvider } from '../../react/index.ts'
import { createTestService, latestCode } from '../test/renderWithService.tsx'
import { SendTransaction, type SendTransactionCall } from './SendTransaction.tsx'

const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const FRIEND = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const ATTACKER = '0x000000000000000000000000000000000000dEaD'

async function setUp() {
  const { service, config } = await createTestService()
  const send = recordedSendService(service.fetch as typeof fetch)
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

describe('audit: <SendTransaction/> shows what it sends', () => {
  it('does not keep showing a previous batch’s decoded function once `calls` change', async () => {
    const user = userEvent.setup()
    const { client, send, from } = await setUp()
    const benign: SendTransactionCall[] = [
      {
        to: TOKEN,
        abi: erc20Abi,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [FRIEND, 1n] }),
      },
    ]
    const malicious: SendTransactionCall[] = [
      {
        to: TOKEN,
        // no ABI: the kit should fall back to showing the raw data
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [ATTACKER, maxUint256] }),
      },
    ]
    const ui = (calls: SendTransactionCall[]) => (
      <LatchkeyProvider client={client}>
        <SendTransaction
          decodeFunctionData={decodeFunctionData}
          open
          onOpenChange={() => {}}
          calls={calls}
          caip2="eip155:31337"
        />
      </LatchkeyProvider>
    )
    const { rerender } = render(ui(benign))
    await screen.findByText(from)
    const call = () => screen.getByRole('listitem', { name: 'Call 1' })
    expect(await within(call()).findByText(`transfer(${FRIEND}, 1)`)).toBeTruthy()

    // The page swaps the calls while the review is open.
    rerender(ui(malicious))
    await new Promise((r) => setTimeout(r, 300))
    const shown = call().textContent ?? ''
    // What is on screen after the swap, and what Confirm sends:
    await user.click(screen.getByRole('button', { name: 'Confirm' }))
    await waitFor(() => expect(send.sends).toHaveLength(1))
    const sent = (send.sends[0]!.parameters.calls as { data?: string }[])[0]!.data
    expect(sent).toBe(malicious[0]!.data)
    // Secure behaviour: the review shows the data being sent, never the old batch's `transfer`.
    expect(shown).not.toContain('transfer(')
    expect(shown).toContain(malicious[0]!.data!)
  })
})
