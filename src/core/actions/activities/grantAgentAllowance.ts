import type { Activity, SpendingLimitAsset, SpendingLimitPeriod } from '@latchkey/protocol'
import { LatchkeyError, MfaRequiredError, thenOrResume } from '../../errors.ts'
import { query, submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'

/** Marks the policies `grantAgentAllowance` creates, so `revokeAgentAllowance` finds them. */
export const AGENT_POLICY_NOTE = 'latchkey-agent-allowance'

export interface GrantAgentAllowanceParameters extends ActionOptions {
  /** Shown to the user; also the agent user's and the limit's name. */
  agentName: string
  /** The agent's P-256 public key, compressed, hex (66 characters). Its private key never reaches the kit. */
  publicKey: string
  /**
   * The chain the allowance is on, e.g. `eip155:8453` or `solana:mainnet`: the agent's key signs
   * on this chain only (a Solana transaction names no cluster: on Solana, on any cluster).
   */
  caip2: string
  /** The cap per period, a decimal string of the asset's smallest unit (wei for ETH). */
  amount: string
  period: SpendingLimitPeriod
  /**
   * What the agent may spend, on `caip2`: the chain's native unit (an EVM key then signs only plain
   * transfers, no calldata; a Solana key only System transfers), an ERC-20 (only that token's
   * `transfer`, `transferFrom`, `approve` and `increaseAllowance`) or an SPL token (only that mint's
   * Token program transfers and approvals). The limit counts each; the key signs nothing else.
   * @default the chain's native unit
   */
  asset?: SpendingLimitAsset | undefined
  /**
   * The only addresses the asset may go to (the limit refuses others); any when absent or empty.
   * Under an SPL token these are also the only wallets whose token account of the mint the agent
   * may create, paid from the user's SOL (the account's rent): with none, the agent pays only to
   * recipients that already have an account of the mint.
   */
  allowedDestinations?: string[] | undefined
  /**
   * How to show an ERC-20 `asset`'s amounts (the service knows only its contract): kept with the
   * agent's policy, read back by `agentOfPolicy`. `symbol`: 1–11 letters, digits, `.`, `$`, `_`, `-`.
   */
  token?: AgentToken | undefined
}

/** An ERC-20 allowance's token, as the user knows it: `USDC`, 6 decimals. */
export interface AgentToken {
  symbol: string
  decimals: number
}

const SYMBOL = /^[A-Za-z0-9.$_-]{1,11}$/

/**
 * The agent allowance a policy made by `grantAgentAllowance` belongs to (its notes), or undefined
 * for any other policy: only a limit named by such a policy is an agent's.
 */
export function agentOfPolicy(
  notes: string,
): { userId: string; spendingLimitId: string; token?: AgentToken } | undefined {
  const [mark, userId, spendingLimitId, symbol, decimals] = notes.split(':')
  if (mark !== AGENT_POLICY_NOTE || !userId || !spendingLimitId) return undefined
  const token =
    symbol && SYMBOL.test(symbol) && /^\d{1,2}$/.test(decimals ?? '')
      ? { symbol, decimals: Number(decimals) }
      : undefined
  return { userId, spendingLimitId, ...(token ? { token } : {}) }
}

export interface GrantAgentAllowanceReturnType {
  /** The agent's own, non-root user, which holds its key. */
  userId: string
  apiKeyId: string
  spendingLimitId: string
  /** The policy that lets the agent sign what its limit counts, and nothing else. */
  policyId: string
}

const COMPRESSED_P256 = /^0[23][0-9a-f]{64}$/i
/** A user's or a limit's id as the service makes them (a UUID, a ULID). */
const SERVICE_ID = /^[0-9A-Za-z_-]{1,100}$/
const EVM_CHAIN = /^eip155:([1-9][0-9]{0,15})$/
const SOLANA_CLUSTER = /^solana:[1-9A-HJ-NP-Za-km-z]{1,32}$/
const EVM_ADDRESS = /^0x[0-9a-f]{40}$/
const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/

/** ERC-20 selectors the limit decodes and counts: transfer, transferFrom, approve, increaseAllowance. */
const ERC20_SELECTORS = ['0xa9059cbb', '0x23b872dd', '0x095ea7b3', '0x39509351']
const SYSTEM_PROGRAM = '11111111111111111111111111111111'
/** Programs that move nothing by themselves: Compute Budget, Memo v2 and v1. */
const HARMLESS_PROGRAMS = [
  'ComputeBudget111111111111111111111111111111',
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr',
  'Memo1UhkJRfHyvLMcVucJwxXeuD3j5oJwL4pdG5JNo',
]
const TOKEN_PROGRAMS = [
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
]
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL'

const list = (items: readonly string[]) => `[${items.map((item) => `'${item}'`).join(', ')}]`

const invalid = (field: string, message: string) =>
  new LatchkeyError(message, { code: 'FIELD_INVALID', details: { field } })

/**
 * The grant's asset, checked: its chain is `caip2` (`eip155:<id>` or `solana:<cluster>`), its
 * contract a 0x address, its mint a base58 one. Only values that passed these patterns go into the
 * agent's policy condition.
 */
function assetOf(grant: Pick<Grant, 'caip2' | 'asset'>): SpendingLimitAsset {
  const caip2 = grant.caip2
  if (!EVM_CHAIN.test(caip2) && !SOLANA_CLUSTER.test(caip2))
    throw invalid('caip2', 'The chain must be eip155:<chain id> or solana:<cluster>')
  const asset = grant.asset ?? { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2 }
  if (asset.caip2 !== caip2) throw invalid('asset', `The asset must be on the allowance's chain, ${caip2}`)
  const evm = caip2.startsWith('eip155:')
  if (asset.type === 'SPENDING_LIMIT_ASSET_NATIVE') return asset
  if (asset.type === 'SPENDING_LIMIT_ASSET_ERC20' && evm) {
    const contract = asset.contract.toLowerCase()
    if (!EVM_ADDRESS.test(contract))
      throw invalid('asset.contract', 'The token contract must be 0x and 40 hex characters')
    return { ...asset, contract }
  }
  if (asset.type === 'SPENDING_LIMIT_ASSET_SPL' && !evm) {
    if (!SOLANA_ADDRESS.test(asset.mint))
      throw invalid('asset.mint', 'The mint must be a base58 Solana address')
    return asset
  }
  throw invalid(
    'asset',
    `An allowance on ${caip2} is of its native unit or ${evm ? 'an ERC-20' : 'an SPL'} token`,
  )
}

/**
 * The grant's `allowedDestinations`, checked where they go into the agent's policy condition (an
 * SPL grant's, `splCondition`): each a base58 Solana address, else a `FIELD_INVALID` naming
 * `allowedDestinations` before anything is created. The limit checks them all the same.
 */
function destinationsOf(grant: Pick<Grant, 'allowedDestinations'>, asset: SpendingLimitAsset): string[] {
  const destinations = grant.allowedDestinations ?? []
  if (
    asset.type === 'SPENDING_LIMIT_ASSET_SPL' &&
    destinations.some((address) => !SOLANA_ADDRESS.test(address))
  )
    throw invalid('allowedDestinations', 'Each allowed destination must be a base58 Solana address')
  return destinations
}

/**
 * What the agent's policy allows: exactly the signatures its limit on `asset` counts, on the
 * limit's chain. A limit counts nothing on another chain, an ERC-20 limit neither a plain transfer
 * of the chain's unit nor another token, an SPL limit neither lamports nor another mint, and no
 * limit reads a raw payload or a message: the policy allows none of them. What a transaction
 * sends to an address off `allowedDestinations` is the limit's to refuse
 * (`SPEND_DESTINATION_NOT_ALLOWED`).
 *
 * - EVM (`sign_transaction` of an Ethereum transaction, every call of an `eth_send_transaction`):
 *   the chain id of `asset.caip2`; native: no calldata; ERC-20: a call of value 0 to the token
 *   with one of the four selectors the limit decodes. Broadcasting a signed transaction on the
 *   chain (`eth_send_raw_transaction`) signs nothing and is allowed.
 * - Solana (`sign_transaction` of a Solana transaction, `sol_send_transaction`): SOL: only System
 *   transfers and the harmless programs; SPL: only the Token programs' transfers and approvals
 *   (`TransferChecked` and `ApproveChecked` of the mint; `Transfer` and `Approve`, which the limit
 *   counts from the signer's account of the mint and refuses from any other), the creation of an
 *   `allowedDestinations` wallet's token account of the mint (`splCondition`) and the harmless
 *   programs.
 *
 * `asset` must come from `assetOf`, `destinations` from `destinationsOf`: its chain id, contract,
 * mint and the destinations are interpolated.
 */
function agentCondition(asset: SpendingLimitAsset, destinations: readonly string[]): string {
  const chainId = EVM_CHAIN.exec(asset.caip2)?.[1]
  if (chainId !== undefined) {
    const what =
      asset.type === 'SPENDING_LIMIT_ASSET_ERC20'
        ? `eth.tx.to == '${asset.contract}' && eth.tx.value == 0 && eth.tx.data[0..10] in ${list(ERC20_SELECTORS)}`
        : "eth.tx.data in ['0x', '']"
    return (
      "((activity.kind == 'sign_transaction' && activity.params.type == 'TRANSACTION_TYPE_ETHEREUM'" +
      ` || activity.kind == 'eth_send_transaction') && eth.tx.chain_id == ${chainId} && ${what})` +
      ` || (activity.kind == 'eth_send_raw_transaction' && activity.params.caip2 == '${asset.caip2}')`
    )
  }
  const what =
    asset.type === 'SPENDING_LIMIT_ASSET_SPL'
      ? splCondition(asset.mint, destinations)
      : `solana.tx.program_keys.all(p, p in ${list([SYSTEM_PROGRAM, ...HARMLESS_PROGRAMS])})` +
        ` && solana.tx.instructions.all(i, i.program_key != '${SYSTEM_PROGRAM}' || i.data[0..8] == '02000000')`
  return (
    "(activity.kind == 'sol_send_transaction' || (activity.kind == 'sign_transaction'" +
    ` && activity.params.type == 'TRANSACTION_TYPE_SOLANA')) && ${what}`
  )
}

/**
 * The SPL half of `agentCondition`: the Token programs' transfers and approvals of `mint`, and an
 * Associated Token Account `Create` or `CreateIdempotent` (data empty, `00` or `01`; accounts:
 * payer, account, owner, mint) only of `mint` for an owner on `destinations`, none without them.
 * Such a create is paid by whoever the transaction names as payer, the user's wallet for an agent:
 * its rent (about 0.002 SOL) goes into an account its owner can close and keep. Any owner and any
 * mint let the agent pay that rent out to accounts a thief owns, one per fresh mint, which no SPL
 * limit counts; its owner and mint held to the grant's, the rent goes only to a recipient the user
 * named, once per account. `RecoverNested` and every other instruction of the program are refused.
 */
function splCondition(mint: string, destinations: readonly string[]): string {
  const tokens =
    `!(i.program_key in ${list(TOKEN_PROGRAMS)}) || i.data[0..2] in ['03', '04']` +
    ` || (i.data[0..2] in ['0c', '0d'] && i.accounts[1] == '${mint}')`
  if (destinations.length === 0)
    return (
      `solana.tx.program_keys.all(p, p in ${list([...TOKEN_PROGRAMS, ...HARMLESS_PROGRAMS])})` +
      ` && solana.tx.instructions.all(i, ${tokens})`
    )
  return (
    `solana.tx.program_keys.all(p, p in ${list([...TOKEN_PROGRAMS, ASSOCIATED_TOKEN_PROGRAM, ...HARMLESS_PROGRAMS])})` +
    ` && solana.tx.instructions.all(i, (${tokens}) && (i.program_key != '${ASSOCIATED_TOKEN_PROGRAM}'` +
    ` || (i.data in ['', '00', '01'] && i.accounts[3] == '${mint}' && i.accounts[2] in ${list(destinations)}` +
    // The program sizes the account by, and hands it to, the token program it is given: only a
    // real one (any other could take 10 MiB of the user's rent), with the System Program.
    ` && i.accounts[4] == '11111111111111111111111111111111' && i.accounts[5] in ${list(TOKEN_PROGRAMS)})))`
  )
}

/**
 * Gives an agent (an AI agent, a back end) an allowance: a non-root user of the organization
 * holding the agent's API key, a spending limit scoped to that key, and a policy that lets that
 * user sign what the limit counts and nothing else: transactions on the limit's chain that move
 * only its asset, never another chain's, another token, a raw payload or a message, and only when
 * the agent's own key asks (another user's request the policy matches waits, and the agent's
 * vote does not complete it). The key can never raise its own limit, create keys or export. An ERC-20 or SPL
 * allowance counts the token, not the fee each transaction pays in the chain's own unit: on an
 * EVM chain a native limit on the same key (`createSpendingLimit`) caps that too.
 *
 * The chain, the token's contract or mint, and an SPL grant's destinations are checked before
 * anything is created (a `FIELD_INVALID` naming `caip2`, `asset`, `asset.contract`, `asset.mint`
 * or `allowedDestinations`).
 *
 * The key is added first and allowed to sign last, so there is no moment at which it could sign
 * without its limit. A step the service refuses (a policy name already taken, a limit over the
 * organization's count) undoes the ones before it: the agent's user, with its key, and its limit
 * are deleted, and the refusal is thrown. Only a grant cut off half-way (the page closed, the
 * network gone, or a second-factor challenge never completed) leaves a key that can do nothing: `revokeAgentAllowance` cannot list it, since no
 * policy names it; `delete_users` removes it.
 */
export async function grantAgentAllowance(
  client: Latchkey,
  parameters: GrantAgentAllowanceParameters,
): Promise<GrantAgentAllowanceReturnType> {
  const [grant, options] = splitOptions(parameters)
  if (
    grant.token &&
    (!SYMBOL.test(grant.token.symbol) ||
      !Number.isInteger(grant.token.decimals) ||
      grant.token.decimals < 0 ||
      grant.token.decimals > 36)
  )
    throw new LatchkeyError('The token needs a symbol (1–11 letters or digits) and 0–36 decimals', {
      code: 'FIELD_INVALID',
      details: { field: 'token' },
    })
  const asset = assetOf(grant)
  const allowedDestinations = destinationsOf(grant, asset)
  const publicKey = grant.publicKey.trim().toLowerCase().replace(/^0x/, '')
  if (!COMPRESSED_P256.test(publicKey))
    throw new LatchkeyError('The agent key must be a compressed P-256 public key (66 hex characters)', {
      code: 'FIELD_INVALID',
      details: { field: 'publicKey' },
    })
  const created = submit(
    client,
    'create_users',
    {
      users: [
        {
          userName: grant.agentName,
          apiKeys: [{ apiKeyName: grant.agentName, publicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    },
    options,
  )
  // Under an MFA policy a step waits for the user's second factor: the MfaRequiredError it
  // throws resumes into the rest of the grant, so completing it (`completeMfa`, `<StepUp/>`)
  // goes on to the next step, which may wait again (a new MfaRequiredError, resuming likewise).
  return thenOrResume(created, async (created) => {
    const userId = created.result.userIds[0] as string
    const organizationId = created.activity.organizationId
    let spendingLimitId: string | undefined
    // The key first, as a revoke does: once it is gone nothing it was given matters. Not under
    // the caller's signal: an aborted grant is undone too.
    const undo = async () => {
      const quiet = { ...options, signal: undefined }
      await submit(client, 'delete_users', { userIds: [userId] }, quiet).catch(() => undefined)
      if (spendingLimitId)
        await submit(client, 'latchkey_delete_spending_limit', { spendingLimitId }, quiet).catch(
          () => undefined,
        )
    }
    return undoOnRefusal(
      allowAgent(client, { ...grant, asset, allowedDestinations }, options, {
        userId,
        publicKey,
        organizationId,
      }),
      undo,
      (allowed) => {
        spendingLimitId = allowed.spendingLimitId
        return undoOnRefusal(
          policyFor(client, { ...grant, asset, allowedDestinations }, options, { userId, spendingLimitId }),
          undo,
          (policyId) => ({
            userId,
            apiKeyId: allowed.apiKeyId,
            spendingLimitId: allowed.spendingLimitId,
            policyId,
          }),
        )
      },
    )
  })
}

/**
 * `then(await step)`, undoing the grant when the service refuses the step (also once a step that
 * waited for a second factor is completed and then refused). A wait is no refusal: its
 * MfaRequiredError is thrown again, resuming into `then`; nothing is undone.
 */
async function undoOnRefusal<T, U>(
  step: Promise<T>,
  undo: () => Promise<void>,
  then: (value: T) => U | Promise<U>,
): Promise<U> {
  let value: T
  try {
    value = await step
  } catch (error) {
    if (!(error instanceof MfaRequiredError)) {
      await undo()
      throw error
    }
    const held = error as MfaRequiredError<T>
    const resume = async (activity: Activity) => {
      try {
        return await held.resume(activity)
      } catch (refusal) {
        if (!(refusal instanceof MfaRequiredError)) await undo()
        throw refusal
      }
    }
    throw new MfaRequiredError(held.activity, held.steps, resume).map(then)
  }
  return then(value)
}

type Grant = Omit<GrantAgentAllowanceParameters, keyof ActionOptions>
/** A grant whose asset `assetOf` checked, and its destinations `destinationsOf`. */
type CheckedGrant = Omit<Grant, 'asset' | 'allowedDestinations'> & {
  asset: SpendingLimitAsset
  allowedDestinations: string[]
}

/** The agent's key read back, and its limit. */
async function allowAgent(
  client: Latchkey,
  grant: CheckedGrant,
  options: ActionOptions,
  { userId, publicKey, organizationId }: { userId: string; publicKey: string; organizationId: string },
): Promise<{ apiKeyId: string; spendingLimitId: string }> {
  const { users } = await query(client, 'list_users', { organizationId }, options)
  const apiKeyId = users
    .find((user) => user.userId === userId)
    ?.apiKeys.find((key) => key.credential.publicKey.toLowerCase() === publicKey)?.apiKeyId
  if (!apiKeyId)
    throw new LatchkeyError('The agent key was added but cannot be read back', { code: 'INTERNAL' })
  // Read through a wait for a second factor too (its MfaRequiredError resumes to the same).
  return thenOrResume(
    submit(
      client,
      'latchkey_create_spending_limit',
      {
        spendingLimitName: grant.agentName,
        scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: grant.period },
        asset: grant.asset,
        amount: grant.amount,
        allowedDestinations: grant.allowedDestinations,
      },
      options,
    ),
    ({ result }) => ({ apiKeyId, spendingLimitId: result.spendingLimitId }),
  )
}

/**
 * The policy that lets the agent's user sign and send what its limit counts (`agentCondition`),
 * and names its limit (`agentOfPolicy`).
 */
async function policyFor(
  client: Latchkey,
  grant: CheckedGrant,
  options: ActionOptions,
  { userId, spendingLimitId }: { userId: string; spendingLimitId: string },
): Promise<string> {
  // The ids go into the policy's consensus and notes: only as the service makes them.
  if (!SERVICE_ID.test(userId) || !SERVICE_ID.test(spendingLimitId))
    throw new LatchkeyError('The service answered an id the agent policy cannot name', { code: 'INTERNAL' })
  return thenOrResume(
    submit(
      client,
      'create_policy',
      {
        policyName: `${grant.agentName}: may sign and send within its allowance`,
        effect: 'EFFECT_ALLOW',
        // Only what the limit counts: its chain, its asset, transactions it decodes.
        condition: agentCondition(grant.asset, grant.allowedDestinations),
        // Met by the agent's own request alone. Another user's request matching this condition (a
        // second agent's, whose limit counts another asset) waits, and the agent's vote never meets
        // it: what it signed would be counted by the requester's limit, not by this one.
        consensus: `approvers.all(user, user.id == '${userId}')`,
        notes:
          `${AGENT_POLICY_NOTE}:${userId}:${spendingLimitId}` +
          (grant.token ? `:${grant.token.symbol}:${grant.token.decimals}` : ''),
      },
      options,
    ),
    ({ result }) => result.policyId,
  )
}
