// An Associated Token Account `Create(Idempotent)` paid by the user's wallet moves its lamports, the
// new account's rent (~0.00204 SOL), into a token account its owner can close and keep. An agent
// with the kit's SPL allowance ("1 base unit of one token a day") once signed any number of them
// for a thief's accounts of fresh mints: its policy allowed the Associated Token Account program
// with any owner and mint, and the SPL limit took the program for harmless, so the user's SOL went
// to the thief uncounted, unbounded over signatures. Now the grant's policy allows a creation only
// of its mint for one of its `allowedDestinations` (none without them), and an SPL limit, whatever
// policy let the signature through, refuses a creation the signer pays for anyone but itself or an
// allow-list address's account of its mint (SPEND_UNDECODABLE). LiteSVM dev node, Token program.
import {
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  createNoopSigner,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import {
  AccountState,
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getMintEncoder,
  getTokenDecoder,
  getTokenEncoder,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSpendingLimit } from '../../../../src/core/actions/activities/createSpendingLimit.ts'
import { createWallet } from '../../../../src/core/actions/activities/createWallet.ts'
import { grantAgentAllowance } from '../../../../src/core/actions/activities/grantAgentAllowance.ts'
import { signTransaction } from '../../../../src/core/actions/activities/signTransaction.ts'
import { addSessionFromKey } from '../../../../src/core/session/sessions.ts'
import { type ClientFixture, createClientFixture } from '../../../../src/core/test/fixtures.ts'
import { type SolanaNode, startSolanaNode } from '../../src/dev/startSolanaNode.ts'
import { broadcastSolana, solanaTransaction } from '../support/solanaTransaction.ts'

let node: SolanaNode
beforeAll(async () => {
  node = await startSolanaNode()
})
afterAll(async () => {
  await node?.close()
})

const TOKEN_ACCOUNT_SIZE = 165n
const ACCOUNTS = 8

/** A fresh initialized mint (6 decimals) written into the SVM. */
async function newMint(): Promise<Address> {
  const { address } = await generateKeyPairSigner()
  node.svm.setAccount({
    address,
    data: new Uint8Array(
      getMintEncoder().encode({
        mintAuthority: null,
        supply: 10n ** 12n,
        decimals: 6,
        isInitialized: true,
        freezeAuthority: null,
      }),
    ),
    executable: false,
    lamports: node.svm.minimumBalanceForRentExemption(82n),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: 82n,
  } as never)
  return address
}

const ata = async (owner: Address, mint: Address) =>
  (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0]

/** `owner`'s associated account of `mint`, holding `amount`, written into the SVM. */
async function fundTokens(owner: Address, mint: Address, amount: bigint): Promise<void> {
  node.svm.setAccount({
    address: await ata(owner, mint),
    data: new Uint8Array(
      getTokenEncoder().encode({
        mint,
        owner,
        amount,
        delegate: null,
        state: AccountState.Initialized,
        isNative: null,
        delegatedAmount: 0n,
        closeAuthority: null,
      }),
    ),
    executable: false,
    lamports: node.svm.minimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: TOKEN_ACCOUNT_SIZE,
  } as never)
}

/** The token account's balance, or undefined when it does not exist. */
async function tokenBalance(owner: Address, mint: Address): Promise<bigint | undefined> {
  const account = node.svm.getAccount(await ata(owner, mint)) as { data: Uint8Array } | null
  return account ? getTokenDecoder().decode(account.data).amount : undefined
}

/** `CreateIdempotent` of `owner`'s account of each mint, paid by `payer`. */
const creates = (payer: Address, owner: Address, mints: Address[]) =>
  Promise.all(
    mints.map((mint) =>
      getCreateAssociatedTokenIdempotentInstructionAsync({ payer: createNoopSigner(payer), owner, mint }),
    ),
  )

interface Wallet {
  fx: ClientFixture
  organizationId: string
  user: string
  sol: Address
}

/** A signed-up user with a Solana account holding 1 SOL. */
async function funded(): Promise<Wallet> {
  const fx = await createClientFixture()
  const { organizationId } = await fx.signUpDirect()
  const user = fx.client.store.getState().activeId as string
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['solana'] })
  const sol = addresses[0] as Address
  node.airdrop(sol, 10n ** 9n)
  return { fx, organizationId, user, sol }
}

/** Signs `instructions` with the wallet as `sessionId`: what was signed, or the refusal's code. */
async function signAs(wallet: Wallet, sessionId: string, instructions: Instruction[]) {
  return signTransaction(wallet.fx.client, {
    signWith: wallet.sol,
    type: 'TRANSACTION_TYPE_SOLANA',
    unsignedTransaction: solanaTransaction(wallet.sol, instructions, node.svm.latestBlockhash()),
    sessionId,
  }).then(
    (signed) => ({ signed: signed.signedTransaction }),
    (error: { code?: string }) => ({ refused: error.code }),
  )
}

/** A key given the kit's SPL allowance of "1 base unit of `mint` a day": its session's id. */
async function splAgent(wallet: Wallet, mint: Address, allowedDestinations?: string[]): Promise<string> {
  const { fx } = wallet
  const agentKey = await fx.client.keyStore.create({ scope: fx.client.config.organizationId })
  const { userId } = await grantAgentAllowance(fx.client, {
    agentName: 'Token agent',
    publicKey: agentKey.publicKey,
    caip2: 'solana:mainnet',
    amount: '1',
    period: 'PERIOD_DAY',
    asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint },
    allowedDestinations,
    sessionId: wallet.user,
  })
  return addSessionFromKey(fx.client, {
    publicKey: agentKey.publicKey,
    userId,
    organizationId: wallet.organizationId,
    lifetimeSeconds: 3600,
    method: 'api-key',
    label: 'agent',
  }).id
}

/**
 * The attack: `ACCOUNTS` token accounts of fresh mints for the thief, paid by the wallet, signed
 * as `sessionId`. Signed, it is sent and the thief closes every account to itself. What the
 * wallet lost and the thief gained besides the fee.
 */
async function rentToThief(wallet: Wallet, sessionId: string) {
  const thief = await generateKeyPairSigner()
  const mints = await Promise.all(Array.from({ length: ACCOUNTS }, () => newMint()))
  const before = node.balance(wallet.sol)
  const outcome = await signAs(wallet, sessionId, await creates(wallet.sol, thief.address, mints))
  if (!('signed' in outcome)) return { refused: outcome.refused, userLoss: 0n, thiefGain: 0n }
  expect((await broadcastSolana(node.url, outcome.signed)) as { error?: unknown }).not.toHaveProperty('error')
  const userLoss = before - node.balance(wallet.sol) - 5_000n
  node.airdrop(thief.address, 10n ** 7n)
  const thiefBefore = node.balance(thief.address)
  const accounts = await Promise.all(mints.map((mint) => ata(thief.address, mint)))
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(thief, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: node.svm.latestBlockhash() as Blockhash, lastValidBlockHeight: 10n ** 9n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstructions(
        accounts.map((account) =>
          getCloseAccountInstruction({ account, destination: thief.address, owner: thief }),
        ),
        m,
      ),
  )
  const closed = await signTransactionMessageWithSigners(message)
  const wire = Buffer.from(getBase64EncodedWireTransaction(closed), 'base64').toString('hex')
  expect((await broadcastSolana(node.url, wire)) as { error?: unknown }).not.toHaveProperty('error')
  return { refused: undefined, userLoss, thiefGain: node.balance(thief.address) - thiefBefore }
}

describe("an SPL spending limit and the kit's SPL agent allowance: no token-account rent to a thief", () => {
  it('the agent of an allowance without destinations signs no token-account creation; a System transfer is refused too (control)', async () => {
    const wallet = await funded()
    const agent = await splAgent(wallet, await newMint())
    const thief = await generateKeyPairSigner()
    const rent = node.svm.minimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE)
    // Control: the same lamports as a System transfer to the thief.
    const control = await signAs(wallet, agent, [
      getTransferSolInstruction({
        source: createNoopSigner(wallet.sol),
        destination: thief.address,
        amount: rent * BigInt(ACCOUNTS),
      }),
    ])
    expect(control).toEqual({ refused: 'PERMISSION_DENIED' })
    expect(await rentToThief(wallet, agent)).toEqual({
      refused: 'PERMISSION_DENIED',
      userLoss: 0n,
      thiefGain: 0n,
    })
  }, 60_000)

  it("with destinations: the agent creates a listed recipient's account of the mint and pays it; no other owner's, no other mint's", async () => {
    const wallet = await funded()
    const mint = await newMint()
    await fundTokens(wallet.sol, mint, 10n)
    const shop = (await generateKeyPairSigner()).address
    const agent = await splAgent(wallet, mint, [shop])
    // The common case: the recipient has no account of the token yet.
    const pay = getTransferCheckedInstruction({
      source: await ata(wallet.sol, mint),
      mint,
      destination: await ata(shop, mint),
      authority: createNoopSigner(wallet.sol),
      amount: 1n,
      decimals: 6,
    })
    const paid = await signAs(wallet, agent, [...(await creates(wallet.sol, shop, [mint])), pay])
    expect(paid).toHaveProperty('signed')
    const sent = (await broadcastSolana(node.url, (paid as { signed: string }).signed)) as { error?: unknown }
    expect(sent).not.toHaveProperty('error')
    expect(await tokenBalance(shop, mint)).toBe(1n)
    // The listed recipient's account of another mint, and a thief's accounts: each a rent out.
    expect(await signAs(wallet, agent, await creates(wallet.sol, shop, [await newMint()]))).toEqual({
      refused: 'PERMISSION_DENIED',
    })
    expect(await rentToThief(wallet, agent)).toEqual({
      refused: 'PERMISSION_DENIED',
      userLoss: 0n,
      thiefGain: 0n,
    })
  }, 60_000)

  it('an SPL limit alone, under a signer no policy holds back, refuses a token account the signer would pay for a thief; its own account passes', async () => {
    const wallet = await funded()
    const mint = await newMint()
    await createSpendingLimit(wallet.fx.client, {
      spendingLimitName: 'token a day',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: wallet.sol },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint },
      amount: '1',
      allowedDestinations: [],
      sessionId: wallet.user,
    })
    // The root user: its requests pass every policy, so only the limit stands in the way.
    expect(await rentToThief(wallet, wallet.user)).toEqual({
      refused: 'SPEND_UNDECODABLE',
      userLoss: 0n,
      thiefGain: 0n,
    })
    // The signer's own account of any mint: its rent stays the signer's.
    const own = await signAs(wallet, wallet.user, await creates(wallet.sol, wallet.sol, [await newMint()]))
    expect(own).toHaveProperty('signed')
  }, 60_000)
})
