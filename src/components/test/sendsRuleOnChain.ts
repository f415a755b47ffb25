// The set-up the on-chain tests of "sends above an amount need a passkey" share (the rule against
// the kit's EIP-7702 delegate: sendsRuleDelegateBatch.test.tsx, sendsRuleSelfCall.test.tsx): one
// anvil node with the delegate deployed for the file, and per test a signed-in user (the stolen
// session) with a passkey, a funded account under the 0.1 ETH rule, already delegating.
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import { deployDelegate } from '../../../packages/service/src/sending/delegate/index.ts'
import { type EvmNode, startEvmNode } from '../../../scripts/evmNode.mjs'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { sendCalls } from '../../core/actions/activities/sendCalls.ts'
import { addPasskey } from '../../core/actions/auth/addPasskey.ts'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { getCallsStatus } from '../../core/actions/queries/getCallsStatus.ts'
import { createLatchkey } from '../../react/index.ts'
import { SENDS_METHODS, SENDS_POLICY, sendsCondition } from '../mfa/rules.ts'
import {
  createTestService,
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
} from './renderWithService.tsx'

export const FAUCET_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
export const ETH = 10n ** 18n
/** How the rule refuses: the passkey is asked for. */
export const held = { code: 'MFA_REQUIRED', methods: ['AUTHENTICATION_TYPE_PASSKEY'] }

/**
 * Registers the file's hooks (anvil and the delegate for the file; each test's service and soft
 * authenticator undone after it) and returns the node and what each test sets up.
 */
export function sendsRuleOnChain() {
  const chain: { node: EvmNode; delegate: string } = { node: undefined!, delegate: '' }
  let authenticator: SoftAuthenticator | undefined
  let close: (() => Promise<void>) | undefined
  beforeAll(async () => {
    chain.node = await startEvmNode()
    chain.delegate = await deployDelegate(chain.node.url, FAUCET_KEY)
  })
  afterEach(async () => {
    authenticator?.uninstall()
    authenticator = undefined
    await close?.()
    close = undefined
  })
  afterAll(() => chain.node?.close())

  const balance = async (address: string) =>
    BigInt((await chain.node.rpc('eth_getBalance', [address, 'latest'])) as string)

  /** A signed-in user with a passkey, a funded account under the 0.1 ETH rule, delegating. */
  async function setUp() {
    const { node, delegate } = chain
    authenticator = installSoftAuthenticator()
    const { service, config } = await createTestService({
      rpc: { 'eip155:31337': node.url },
      sponsorship: { delegates: { 'eip155:31337': delegate } },
    } as never)
    close = () => service.close()
    const client = createLatchkey({ ...config, polling: { intervalMs: 20, timeoutMs: 10_000 } })
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'ana@example.com' })
    await completeOtpSignIn(client, {
      ...started,
      otpCode: await latestCode(service, 'ana@example.com'),
      userName: 'Ana',
    })
    await addPasskey(client, { authenticatorName: 'Laptop' })
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const from = addresses[0] as `0x${string}`
    await node.rpc('anvil_setBalance', [from, `0x${ETH.toString(16)}`])
    await createMfaPolicy(client, {
      mfaPolicyName: SENDS_POLICY,
      condition: sendsCondition(ETH / 10n),
      requiredAuthenticationMethods: SENDS_METHODS,
      order: 0,
    })
    const signedIn = authenticator
    const passkeyUses = () => signedIn.credentials[0]!.counter
    const waitFor = async (sendTransactionStatusId: string) => {
      const until = Date.now() + 15_000
      let status = await getCallsStatus(client, { sendTransactionStatusId })
      while (status.status === 'pending' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50))
        status = await getCallsStatus(client, { sendTransactionStatusId })
      }
      return status.status
    }
    // A batch worth 0 passes at once (as the rule intends), and puts the delegate on the account.
    const { sendTransactionStatusId } = await sendCalls(client, {
      from,
      caip2: 'eip155:31337',
      calls: [
        { to: '0x00000000000000000000000000000000000000f1', value: '0' },
        { to: '0x00000000000000000000000000000000000000f2', value: '0' },
      ],
    })
    expect(await waitFor(sendTransactionStatusId)).toBe('success')
    const code = (await node.rpc('eth_getCode', [from, 'latest'])) as string
    expect(code.toLowerCase()).toBe(`0xef0100${delegate.slice(2).toLowerCase()}`)
    return { client, from, passkeyUses, waitFor }
  }
  return { chain, balance, setUp }
}
