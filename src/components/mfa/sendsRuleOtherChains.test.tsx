// "Sends above an amount need a passkey" and the coins of other chains. A Solana transaction is
// held whatever it moves (the rule reads only Ethereum amounts): `sign_transaction` of it, a
// `sol_send_transaction` (V1 and V2), and an ed25519 raw signature of any bytes, which is the
// signature of the Solana transaction whose message they are (and of a Sui, Aptos, Stellar or TON
// one). So is a SHA-256 raw signature: of a Bitcoin sighash (after its first SHA-256), a Tron
// transaction's raw_data or a Cosmos sign doc it is that transaction's signature.
import {
  type Address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getTransactionEncoder,
  pipe,
  type SignatureBytes,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type SolanaNode, startSolanaNode } from '../../../packages/service/src/dev/startSolanaNode.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { sendTransaction } from '../../core/actions/activities/sendTransaction.ts'
import { signMessage } from '../../core/actions/activities/signMessage.ts'
import { signRawPayloads } from '../../core/actions/activities/signRawPayloads.ts'
import { signTransaction } from '../../core/actions/activities/signTransaction.ts'
import { addPasskey } from '../../core/actions/auth/addPasskey.ts'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { getCallsStatus } from '../../core/actions/queries/getCallsStatus.ts'
import { createLatchkey } from '../../react/index.ts'
import {
  createTestService,
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
} from '../test/renderWithService.tsx'
import { SENDS_METHODS, SENDS_POLICY, sendsCondition } from './rules.ts'

const ETH = 10n ** 18n
const SOL = 10n ** 9n
const held = { code: 'MFA_REQUIRED', methods: ['AUTHENTICATION_TYPE_PASSKEY'] }

let node: SolanaNode
let authenticator: SoftAuthenticator | undefined
let close: (() => Promise<void>) | undefined
beforeAll(async () => {
  node = await startSolanaNode()
})
afterEach(async () => {
  authenticator?.uninstall()
  authenticator = undefined
  await close?.()
  close = undefined
})
afterAll(async () => {
  await node?.close()
})

async function setUp(email: string) {
  authenticator = installSoftAuthenticator()
  const { service, config } = await createTestService({
    rpc: { [node.caip2]: node.url },
    sending: { pollIntervalMs: 20 },
  } as never)
  close = () => service.close()
  const client = createLatchkey({ ...config, polling: { intervalMs: 20, timeoutMs: 10_000 } })
  const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
  await completeOtpSignIn(client, { ...started, otpCode: await latestCode(service, email), userName: 'Ana' })
  await addPasskey(client, { authenticatorName: 'Laptop' })
  const { addresses } = await createWallet(client, { walletName: 'Sol', chains: ['solana'] })
  const user = addresses[0] as Address
  node.airdrop(user, SOL)
  await createMfaPolicy(client, {
    mfaPolicyName: SENDS_POLICY,
    condition: sendsCondition(ETH / 10n),
    requiredAuthenticationMethods: SENDS_METHODS,
    order: 0,
  })
  const passkeyUses = () => authenticator!.credentials[0]!.counter
  return { client, user, passkeyUses }
}

function transfer(user: Address, to: Address, amount: bigint) {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(user, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: node.svm.latestBlockhash() as never, lastValidBlockHeight: 1_000n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        getTransferSolInstruction({ source: createNoopSigner(user), destination: to, amount }),
        m,
      ),
  )
  const compiled = compileTransaction(message)
  return {
    compiled,
    unsignedTransaction: Buffer.from(getTransactionEncoder().encode(compiled)).toString('hex'),
  }
}

describe('sends rule and Solana', () => {
  it('sol_send_transaction of 0.5 SOL under the rule is held, as sign_transaction of it is', async () => {
    const THIEF = '8qbHbw2BbbTHBW1sbeqakYXVKRQM8Ne7pLK7m6CVfeR' as Address
    const { client, user, passkeyUses } = await setUp('sol1@example.com')
    const before = passkeyUses()
    const { unsignedTransaction } = transfer(user, THIEF, SOL / 2n)
    // Control: sign_transaction of the same transfer is held.
    await expect(
      signTransaction(client, { signWith: user, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction }),
    ).rejects.toMatchObject(held)

    let refusal: unknown
    try {
      const sent = await sendTransaction(client, { unsignedTransaction, signWith: user, caip2: node.caip2 })
      await getCallsStatus(client, { sendTransactionStatusId: sent.sendTransactionStatusId, wait: true })
    } catch (error) {
      refusal = error
    }
    expect({
      stolen: node.balance(THIEF),
      passkeyUsed: passkeyUses() > before,
      refusal: (refusal as { code?: string })?.code,
    }).toEqual({ stolen: 0n, passkeyUsed: false, refusal: 'MFA_REQUIRED' })
  })

  it('an ed25519 raw signature of a 0.5 SOL transfer message is held, as sign_transaction of it is', async () => {
    const THIEF = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' as Address
    const { client, user, passkeyUses } = await setUp('sol2@example.com')
    const before = passkeyUses()
    const { compiled, unsignedTransaction } = transfer(user, THIEF, SOL / 2n)
    await expect(
      signTransaction(client, { signWith: user, type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction }),
    ).rejects.toMatchObject(held)

    let refusal: unknown
    try {
      const { signatures } = (await signRawPayloads(client, {
        signWith: user,
        payloads: [Buffer.from(compiled.messageBytes).toString('hex')],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      })) as { signatures: { r: string; s: string }[] }
      const signature = Buffer.from(`${signatures[0]!.r}${signatures[0]!.s}`, 'hex')
      const signed = { ...compiled, signatures: { [user]: new Uint8Array(signature) as SignatureBytes } }
      // Whoever holds it broadcasts it.
      const response = await fetch(node.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'sendTransaction',
          params: [getBase64EncodedWireTransaction(signed as never), { encoding: 'base64' }],
        }),
      })
      await response.json()
    } catch (error) {
      refusal = error
    }
    expect({
      stolen: node.balance(THIEF),
      passkeyUsed: passkeyUses() > before,
      refusal: (refusal as { code?: string })?.code,
    }).toEqual({ stolen: 0n, passkeyUsed: false, refusal: 'MFA_REQUIRED' })
  })

  it('a SHA-256 or ed25519 raw signature is held whatever the account; an Ethereum message signs at once', async () => {
    const { client, user, passkeyUses } = await setUp('sol3@example.com')
    const before = passkeyUses()
    const { addresses } = await createWallet(client, {
      walletName: 'Others',
      chains: ['ethereum', 'bitcoin', 'tron', 'cosmos'],
    })
    const [ethereum, bitcoin, tron, cosmos] = addresses as [string, string, string, string]
    const sha256 = (signWith: string, payload: string) =>
      signRawPayloads(client, {
        signWith,
        payloads: [payload],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_SHA256',
      })
    // Bitcoin signs SHA-256 of SHA-256 of its sighash preimage: the first, signed under SHA-256.
    await expect(sha256(bitcoin, 'ab'.repeat(32))).rejects.toMatchObject(held)
    // Tron signs SHA-256 of a transaction's raw_data (protobuf), Cosmos of its sign doc.
    await expect(sha256(tron, '0a02c1d0220818c4c0e1f1a5cc4f40e8e2b1c5b7325a')).rejects.toMatchObject(held)
    await expect(sha256(cosmos, '0a0b0a0973656e642074657374')).rejects.toMatchObject(held)
    // An ed25519 signature of text is held too: the rule cannot tell a message from a transaction.
    await expect(
      signMessage(client, { signWith: user, message: 'Sign in to Example' }),
    ).rejects.toMatchObject(held)
    await expect(
      signRawPayloads(client, {
        signWith: user,
        payloads: ['Sign in to Example'],
        encoding: 'PAYLOAD_ENCODING_TEXT_UTF8',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      }),
    ).rejects.toMatchObject(held)
    expect(passkeyUses()).toBe(before)
    // Control: an Ethereum message (EIP-191) still signs at once.
    await expect(
      signMessage(client, { signWith: ethereum, message: 'Sign in to Example' }),
    ).resolves.toBeTruthy()
  })
})
