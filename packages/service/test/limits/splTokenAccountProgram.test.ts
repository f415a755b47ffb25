// The Associated Token Account program takes its "token program" from the instruction's 6th
// account (index 5) and checks it against nothing: it asks that program how big the account is
// (`GetAccountDataSize`), creates the account with that much rent paid by the payer, and assigns it
// to that program. An attacker's program named there sets the size (up to 10 MiB, ~73 SOL of rent)
// and, owning the new account, takes its lamports. Neither the SPL limit's check of a creation the
// signer pays (`associatedAccountCheck`, limits/spendOf.ts) nor the kit's SPL grant policy
// (`splCondition`) read account 5: an owner equal to the signer, or a listed destination with the
// grant's mint, passed with any program there. Now both require the Token or Token-2022 program
// and the System Program, and the limit the derived address too.
import {
  AccountRole,
  type Address,
  createNoopSigner,
  generateKeyPairSigner,
  type Instruction,
} from '@solana/kit'
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getRecoverNestedAssociatedTokenInstructionAsync,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token'
import { describe, expect, it } from 'vitest'
import { createSpendingLimit } from '../../../../src/core/actions/activities/createSpendingLimit.ts'
import { createWallet } from '../../../../src/core/actions/activities/createWallet.ts'
import { grantAgentAllowance } from '../../../../src/core/actions/activities/grantAgentAllowance.ts'
import { signTransaction } from '../../../../src/core/actions/activities/signTransaction.ts'
import { addSessionFromKey } from '../../../../src/core/session/sessions.ts'
import { type ClientFixture, createClientFixture } from '../../../../src/core/test/fixtures.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'

interface Wallet {
  fx: ClientFixture
  organizationId: string
  user: string
  sol: Address
}

async function wallet(): Promise<Wallet> {
  const fx = await createClientFixture()
  const { organizationId } = await fx.signUpDirect()
  const user = fx.client.store.getState().activeId as string
  const { addresses } = await createWallet(fx.client, { walletName: 'Main', chains: ['solana'] })
  return { fx, organizationId, user, sol: addresses[0] as Address }
}

async function signAs(w: Wallet, sessionId: string, instructions: Instruction[]) {
  return signTransaction(w.fx.client, {
    signWith: w.sol,
    type: 'TRANSACTION_TYPE_SOLANA',
    unsignedTransaction: solanaTransaction(w.sol, instructions),
    sessionId,
  }).then(
    () => ({ signed: true as const }),
    (error: { code?: string }) => ({ refused: error.code }),
  )
}

/** `CreateIdempotent` of `owner`'s account of `mint` under `tokenProgram`, paid by `payer`. */
const create = async (payer: Address, owner: Address, mint: Address, tokenProgram: Address) => [
  await getCreateAssociatedTokenIdempotentInstructionAsync({
    payer: createNoopSigner(payer),
    owner,
    mint,
    tokenProgram,
  }),
]

const address = async () => (await generateKeyPairSigner()).address
/** The kit's SPL agent of `w`: 1 unit of a fresh mint a day, to one listed shop; its session id. */
async function shopAgent(w: Wallet) {
  const mint = await address()
  const shop = await address()
  const agentKey = await w.fx.client.keyStore.create({ scope: w.fx.client.config.organizationId })
  const { userId } = await grantAgentAllowance(w.fx.client, {
    agentName: 'Token agent',
    publicKey: agentKey.publicKey,
    caip2: 'solana:mainnet',
    amount: '1',
    period: 'PERIOD_DAY',
    asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint },
    allowedDestinations: [shop],
    sessionId: w.user,
  })
  const agent = addSessionFromKey(w.fx.client, {
    publicKey: agentKey.publicKey,
    userId,
    organizationId: w.organizationId,
    lifetimeSeconds: 3600,
    method: 'api-key',
    label: 'agent',
  }).id
  return { mint, shop, agent }
}

const createOne = async (payer: Address, owner: Address, mint: Address, tokenProgram: Address) =>
  (await create(payer, owner, mint, tokenProgram))[0]!
const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address

describe('ATA creation naming a program of the attacker as its token program (account 5)', () => {
  it('an SPL limit alone refuses a creation the signer pays whose token program is not Token or Token-2022', async () => {
    const w = await wallet()
    const mint = await address()
    await createSpendingLimit(w.fx.client, {
      spendingLimitName: 'token a day',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: w.sol },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint },
      amount: '1',
      allowedDestinations: [],
      sessionId: w.user,
    })
    const thief = await address()
    const attackerProgram = await address()
    // Control: a thief-owned account is refused...
    expect(
      await signAs(w, w.user, await create(w.sol, thief, await address(), TOKEN_PROGRAM_ADDRESS)),
    ).toEqual({
      refused: 'SPEND_UNDECODABLE',
    })
    // ...and the signer's own account under the real Token program is signed, as designed.
    expect(
      await signAs(w, w.user, await create(w.sol, w.sol, await address(), TOKEN_PROGRAM_ADDRESS)),
    ).toEqual({
      signed: true,
    })
    // "The signer's own account", but under the attacker's program, which sets the rent (its
    // GetAccountDataSize answer) and owns the account, so takes the lamports.
    expect(await signAs(w, w.user, await create(w.sol, w.sol, await address(), attackerProgram))).toEqual({
      refused: 'SPEND_UNDECODABLE',
    })
    // Nor an account at another address than the one the program derives for its owner and mint.
    const [misplaced] = await create(w.sol, w.sol, await address(), TOKEN_PROGRAM_ADDRESS)
    const accounts = [...misplaced!.accounts!]
    accounts[1] = { ...accounts[1]!, address: await address() }
    expect(await signAs(w, w.user, [{ ...misplaced!, accounts }])).toEqual({ refused: 'SPEND_UNDECODABLE' })
  }, 60_000)

  it("the kit's SPL agent (with a listed shop) may not create the shop's account under an attacker's token program", async () => {
    const w = await wallet()
    const { mint, shop, agent } = await shopAgent(w)
    // Control: the shop's account of the mint under the Token program is signed (designed).
    expect(await signAs(w, agent, await create(w.sol, shop, mint, TOKEN_PROGRAM_ADDRESS))).toEqual({
      signed: true,
    })
    // Control: another mint is refused by the policy.
    expect(await signAs(w, agent, await create(w.sol, shop, await address(), TOKEN_PROGRAM_ADDRESS))).toEqual(
      {
        refused: 'PERMISSION_DENIED',
      },
    )
    // Same owner and mint, the attacker's program as token program: refused by the grant's policy.
    const attackerProgram = await address()
    expect(await signAs(w, agent, await create(w.sol, shop, mint, attackerProgram))).toEqual({
      refused: 'PERMISSION_DENIED',
    })
  }, 60_000)
})

describe('token-account creations the fix must not let through in another shape', () => {
  it('SPL limit: extra accounts, Token-2022, duplicates, close, RecoverNested, swapped 4/5', async () => {
    const w = await wallet()
    const mint = await address()
    await createSpendingLimit(w.fx.client, {
      spendingLimitName: 'token a day',
      scope: { type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT', address: w.sol },
      window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
      asset: { type: 'SPENDING_LIMIT_ASSET_SPL', caip2: 'solana:mainnet', mint },
      amount: '1',
      allowedDestinations: [],
      sessionId: w.user,
    })
    const thief = await address()
    // Own account under Token-2022 of an attacker's mint: signed (size bounded by Token-2022's
    // required account extensions, rent into the signer's own account).
    expect(
      await signAs(w, w.user, [await createOne(w.sol, w.sol, await address(), TOKEN_2022_PROGRAM_ADDRESS)]),
    ).toEqual({
      signed: true,
    })
    // Extra accounts after index 5 (the program ignores them): signed for the own account, still
    // refused for a thief's.
    const own = await createOne(w.sol, w.sol, await address(), TOKEN_PROGRAM_ADDRESS)
    const extra = { address: thief, role: AccountRole.WRITABLE }
    expect(await signAs(w, w.user, [{ ...own, accounts: [...own.accounts, extra] }])).toEqual({
      signed: true,
    })
    const thiefs = await createOne(w.sol, thief, await address(), TOKEN_PROGRAM_ADDRESS)
    expect(await signAs(w, w.user, [{ ...thiefs, accounts: [...thiefs.accounts, extra] }])).toEqual({
      refused: 'SPEND_UNDECODABLE',
    })
    // Duplicated: an own creation followed by a thief's one is refused as a whole.
    expect(await signAs(w, w.user, [own, own, thiefs])).toEqual({ refused: 'SPEND_UNDECODABLE' })
    // Accounts 4 and 5 swapped: refused.
    const swapped = [...own.accounts]
    ;[swapped[4], swapped[5]] = [swapped[5]!, swapped[4]!]
    expect(await signAs(w, w.user, [{ ...own, accounts: swapped }])).toEqual({ refused: 'SPEND_UNDECODABLE' })
    // Create then CloseAccount to the thief: refused (CloseAccount is no counted instruction).
    const [ata] = await findAssociatedTokenPda({ owner: w.sol, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS })
    const close = getCloseAccountInstruction({
      account: ata,
      destination: thief,
      owner: createNoopSigner(w.sol),
    })
    expect(
      await signAs(w, w.user, [await createOne(w.sol, w.sol, mint, TOKEN_PROGRAM_ADDRESS), close]),
    ).toEqual({
      refused: 'SPEND_UNDECODABLE',
    })
    // RecoverNested with the signer as wallet: signed; the program derives destination and owner
    // account from the wallet (which must sign), so tokens and lamports go only to the signer.
    const recover = await getRecoverNestedAssociatedTokenInstructionAsync({
      walletAddress: createNoopSigner(w.sol),
      ownerTokenMintAddress: mint,
      nestedTokenMintAddress: await address(),
    })
    expect(await signAs(w, w.user, [recover])).toEqual({ signed: true })
  }, 60_000)

  it('kit SPL agent: RecoverNested, a wrong account 1, extra accounts', async () => {
    const w = await wallet()
    const { mint, shop, agent } = await shopAgent(w)
    const good = await createOne(w.sol, shop, mint, TOKEN_2022_PROGRAM_ADDRESS)
    expect(await signAs(w, agent, [good])).toEqual({ signed: true })
    // Account 1 not the derived one: the policy does not read it, the agent's limit refuses it.
    const misplaced = [...good.accounts]
    misplaced[1] = { ...misplaced[1]!, address: await address() }
    expect(await signAs(w, agent, [{ ...good, accounts: misplaced }])).toEqual({
      refused: 'SPEND_UNDECODABLE',
    })
    // Extra trailing accounts: ignored by the program, signed (harmless).
    expect(
      await signAs(w, agent, [
        { ...good, accounts: [...good.accounts, { address: await address(), role: AccountRole.WRITABLE }] },
      ]),
    ).toEqual({ signed: true })
    // RecoverNested: refused by the policy.
    const recover = await getRecoverNestedAssociatedTokenInstructionAsync({
      walletAddress: createNoopSigner(w.sol),
      ownerTokenMintAddress: mint,
      nestedTokenMintAddress: await address(),
    })
    expect(await signAs(w, agent, [recover])).toEqual({ refused: 'PERMISSION_DENIED' })
  }, 60_000)
})
