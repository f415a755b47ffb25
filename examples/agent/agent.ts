/**
 * An agent key: an AI agent or back end signs from a user's wallet with its own API key, inside
 * an allowance the user granted and can revoke (docs/agents.md).
 *
 * The user (root of their sub-organization) adds the agent as a non-root user holding only the
 * agent's public key, a spending limit on that API key ("at most N wei a day on eip155:1") and then
 * one policy ("may sign plain transfers from this wallet on eip155:1", optionally only to one
 * address): a limit counts only its own chain and asset, so the policy says the rest. The agent
 * then uses the published `@turnkey/http` client unchanged. What the policy allows and the
 * allowance covers is signed; over the allowance it gets 429 `SPENDING_LIMIT_EXCEEDED` (with what
 * remains and when it frees); anything else (another chain, wallet or recipient, calldata, an
 * export, a new key, raising its own limit) is 403: no policy lets a non-root user do it. Deleting
 * the agent's API key stops it at once.
 *
 * Run it against a local service (it plays the user too):
 *   npm run -s service -- --port 8787 --json > /tmp/latchkey.json &
 *   until [ -s /tmp/latchkey.json ]; do sleep 1; done
 *   LATCHKEY_SERVICE_JSON="$(head -1 /tmp/latchkey.json)" npx tsx examples/agent/agent.ts
 */

import { fileURLToPath } from 'node:url'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { ApiKeyStamper } from '@turnkey/api-key-stamper'
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http'
import { serializeTransaction } from 'viem'

/** A P-256 API key as `@turnkey/api-key-stamper` takes it. Keep the private half in the agent's secrets. */
export interface AgentKey {
  apiPublicKey: string
  apiPrivateKey: string
}

export function newAgentKey(): AgentKey {
  const privateKey = p256.utils.randomSecretKey()
  return {
    apiPrivateKey: bytesToHex(privateKey),
    apiPublicKey: bytesToHex(p256.getPublicKey(privateKey, true)),
  }
}

/** A published client of the service at `baseUrl`, stamping with `key`. */
export const clientOf = (baseUrl: string, key: AgentKey): TurnkeyClient =>
  new TurnkeyClient({ baseUrl }, new ApiKeyStamper(key))

/** What the user grants: one wallet, an optional single recipient, and a native-unit allowance. */
export interface Grant {
  organizationId: string
  /** The wallet the agent signs for (an id as the service returns it). */
  walletId: string
  agentName: string
  agentPublicKey: string
  /**
   * The EVM chain of the allowance, CAIP-2, e.g. `eip155:1`. The agent signs on this chain only:
   * a limit counts nothing on any other chain, so the policy names this one.
   */
  caip2: string
  /** The allowance per rolling day, in wei (decimal). */
  allowancePerDay: string
  /** Only transfers to this address (`0x` and 40 hex digits), when given (policy and limit both say so). */
  onlyTo?: string
}

/** A grant refused before anything was made: `field` is the `Grant` field that was not acceptable. */
export class InvalidGrantError extends Error {
  constructor(
    readonly field: keyof Grant | 'agentUserId',
    message: string,
  ) {
    super(`${field}: ${message}`)
    this.name = 'InvalidGrantError'
  }
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
/** An id as the service makes them (UUIDs, ULIDs): nothing that could end a quoted string. */
const ID = /^[A-Za-z0-9_-]{1,128}$/
const EVM_CAIP2 = /^eip155:([1-9][0-9]{0,17})$/

/**
 * The agent policy's condition: signing a plain transfer of the chain's unit (no calldata) from
 * `walletId` on the allowance's chain, to `onlyTo` when given. Every value is checked before it is
 * put in the condition (a quote in it would rewrite the condition: `<addr>' || true || 'x` allows
 * anything); a value that is not what it should be is refused with InvalidGrantError.
 *
 * Why each term: a native limit counts only its own chain's unit on its own chain, so the chain is
 * pinned (on any other chain nothing is counted) and calldata is refused (a call into a token
 * contract moves tokens the native limit does not count).
 */
export function agentPolicyCondition(grant: Pick<Grant, 'walletId' | 'caip2' | 'onlyTo'>): string {
  if (!ID.test(grant.walletId)) throw new InvalidGrantError('walletId', 'not a wallet id')
  const chainId = EVM_CAIP2.exec(grant.caip2)?.[1]
  if (!chainId) throw new InvalidGrantError('caip2', 'this recipe grants an EVM chain, `eip155:<chain id>`')
  if (grant.onlyTo !== undefined && !EVM_ADDRESS.test(grant.onlyTo))
    throw new InvalidGrantError('onlyTo', 'not an EVM address (0x and 40 hex digits)')
  return (
    `activity.resource == 'WALLET' && activity.action == 'SIGN' && wallet.id == '${grant.walletId}'` +
    ` && eth.tx.chain_id == ${chainId} && eth.tx.data == '0x'` +
    (grant.onlyTo ? ` && eth.tx.to == '${grant.onlyTo.toLowerCase()}'` : '')
  )
}

/** Submits a Latchkey activity (not in the published client) through its generic `request`. */
async function submitLatchkey(
  client: TurnkeyClient,
  path: string,
  type: string,
  organizationId: string,
  parameters: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const reply = await client.request<
    unknown,
    { activity: { result: Record<string, Record<string, unknown>> } }
  >(`/public/v1/submit/${path}`, { type, timestampMs: String(Date.now()), organizationId, parameters })
  return Object.values(reply.activity.result ?? {})[0] ?? {}
}

/**
 * A step's result, or an error when the activity did not complete: under an MFA policy it waits for
 * the user's second factor (docs/mfa.md), which this recipe does not give; the kit's
 * `grantAgentAllowance` does.
 */
function completed<T>(step: string, status: string, value: T | undefined): T {
  if (value === undefined) throw new Error(`${step} did not complete (${status})`)
  return value
}

/**
 * The user's side: a non-root agent user with the agent's key, a rolling daily spending limit on
 * that key, then a policy letting only that user sign for the wallet, on the limit's chain.
 *
 * The limit is made before the policy, so the key is never able to sign without it; when any step
 * fails (a refused amount, the organization's count of limits, the network), what was made is
 * deleted (the agent's user with its key, then the limit) and the error is thrown.
 */
export async function grantAgent(
  owner: TurnkeyClient,
  grant: Grant,
): Promise<{ agentUserId: string; apiKeyId: string; policyId: string; spendingLimitId: string }> {
  const { organizationId } = grant
  // Checked before anything is made (the agent's user id is checked once it exists).
  const condition = agentPolicyCondition(grant)
  const created = await owner.createUsers({
    type: 'ACTIVITY_TYPE_CREATE_USERS_V4',
    timestampMs: String(Date.now()),
    organizationId,
    parameters: {
      users: [
        {
          userName: grant.agentName,
          apiKeys: [
            { apiKeyName: grant.agentName, publicKey: grant.agentPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    },
  })
  const agentUserId = completed(
    'create_users',
    created.activity.status,
    created.activity.result.createUsersResult?.userIds[0],
  )
  let spendingLimitId: string | undefined
  try {
    if (!ID.test(agentUserId)) throw new InvalidGrantError('agentUserId', 'not a user id')
    const { apiKeys } = await owner.getApiKeys({ organizationId, userId: agentUserId })
    const apiKeyId = apiKeys[0]?.apiKeyId
    if (!apiKeyId) throw new Error('the agent key was added but cannot be read back')
    const limit = await submitLatchkey(
      owner,
      'latchkey_create_spending_limit',
      'ACTIVITY_TYPE_LATCHKEY_CREATE_SPENDING_LIMIT',
      organizationId,
      {
        spendingLimitName: `${grant.agentName} daily allowance`,
        scope: { type: 'SPENDING_LIMIT_SCOPE_API_KEY', apiKeyId },
        window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
        asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: grant.caip2 },
        amount: grant.allowancePerDay,
        ...(grant.onlyTo ? { allowedDestinations: [grant.onlyTo] } : {}),
      },
    )
    spendingLimitId = completed(
      'latchkey_create_spending_limit',
      'no result',
      limit.spendingLimitId as string | undefined,
    )
    const policy = await owner.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: {
        policyName: `${grant.agentName} signs for wallet ${grant.walletId}`,
        effect: 'EFFECT_ALLOW',
        condition,
        consensus: `approvers.all(user, user.id == '${agentUserId}')`,
        notes: 'agent key (docs/agents.md)',
      },
    })
    const policyId = completed(
      'create_policy',
      policy.activity.status,
      policy.activity.result.createPolicyResult?.policyId,
    )
    return { agentUserId, apiKeyId, policyId, spendingLimitId }
  } catch (error) {
    await undoGrant(owner, { organizationId, agentUserId, spendingLimitId })
    throw error
  }
}

/** Undoes a failed grant: the agent's user first (its key with it: nothing it was given matters then), then its limit. */
async function undoGrant(
  owner: TurnkeyClient,
  {
    organizationId,
    agentUserId,
    spendingLimitId,
  }: { organizationId: string; agentUserId: string; spendingLimitId: string | undefined },
): Promise<void> {
  // Best effort: the grant's own error is the one thrown. Should this fail too (the network is
  // gone), delete the agent's user with `delete_users` once it is back: its key goes with it.
  await owner
    .deleteUsers({
      type: 'ACTIVITY_TYPE_DELETE_USERS',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: { userIds: [agentUserId] },
    })
    .catch(() => undefined)
  if (spendingLimitId)
    await submitLatchkey(
      owner,
      'latchkey_delete_spending_limit',
      'ACTIVITY_TYPE_LATCHKEY_DELETE_SPENDING_LIMIT',
      organizationId,
      { spendingLimitId },
    ).catch(() => undefined)
}

/** The user revokes the agent: its API key is deleted, so nothing it stamps is accepted any more. */
export async function revokeAgent(
  owner: TurnkeyClient,
  {
    organizationId,
    agentUserId,
    apiKeyId,
  }: { organizationId: string; agentUserId: string; apiKeyId: string },
): Promise<void> {
  await owner.deleteApiKeys({
    type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
    timestampMs: String(Date.now()),
    organizationId,
    parameters: { userId: agentUserId, apiKeyIds: [apiKeyId] },
  })
}

/** A refusal as the agent sees it: the gRPC code, Latchkey's typed `errorCode`, and its details. */
export interface Refusal {
  code: number
  errorCode: string
  message: string
  details: Record<string, unknown>
}

/** The refusal a request failed with, or undefined for any other error. */
export function refusalOf(error: unknown): Refusal | undefined {
  if (!(error instanceof TurnkeyRequestError)) return undefined
  const details = (error.details ?? {}) as unknown as Record<string, unknown>
  return { code: error.code, errorCode: String(details.errorCode ?? ''), message: error.message, details }
}

/** The agent's side: one EIP-1559 transfer signed with its own key, or the refusal. */
export async function agentTransfer(
  agent: TurnkeyClient,
  options: {
    organizationId: string
    from: string
    to: string
    value: bigint
    chainId: number
    nonce: number
    /**
     * The most it pays per unit of gas, wei. A native allowance counts what the transfer can cost
     * in fees as well as its value: 21,000 gas at this. @default 2 gwei
     */
    maxFeePerGas?: bigint
  },
): Promise<{ signedTransaction: string } | Refusal> {
  const maxFeePerGas = options.maxFeePerGas ?? 2n * 10n ** 9n
  const unsignedTransaction = serializeTransaction({
    type: 'eip1559',
    chainId: options.chainId,
    nonce: options.nonce,
    gas: 21_000n,
    maxFeePerGas,
    maxPriorityFeePerGas: maxFeePerGas < 10n ** 9n ? maxFeePerGas : 10n ** 9n,
    to: options.to as `0x${string}`,
    value: options.value,
  })
  try {
    const reply = await agent.signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: options.organizationId,
      parameters: { signWith: options.from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction },
    })
    return { signedTransaction: reply.activity.result.signTransactionResult?.signedTransaction as string }
  } catch (error) {
    const refusal = refusalOf(error)
    if (!refusal) throw error
    return refusal
  }
}

/** The whole recipe against a running service: the dev organization's root plays the user. */
async function main() {
  const service = JSON.parse(process.env.LATCHKEY_SERVICE_JSON ?? '{}') as {
    baseUrl?: string
    organizationId?: string
    apiPrivateKey?: string
  }
  if (!service.baseUrl || !service.organizationId || !service.apiPrivateKey)
    throw new Error('set LATCHKEY_SERVICE_JSON to the first line of `latchkey-service --json`')
  const ownerKey = {
    apiPrivateKey: service.apiPrivateKey,
    apiPublicKey: bytesToHex(p256.getPublicKey(hexToBytes(service.apiPrivateKey), true)),
  }
  const owner = clientOf(service.baseUrl, ownerKey)
  const organizationId = service.organizationId
  const wallet = await owner.createWallet({
    type: 'ACTIVITY_TYPE_CREATE_WALLET',
    timestampMs: String(Date.now()),
    organizationId,
    parameters: {
      walletName: `Agent wallet ${Date.now()}`,
      accounts: [
        {
          curve: 'CURVE_SECP256K1',
          pathFormat: 'PATH_FORMAT_BIP32',
          path: "m/44'/60'/0'/0/0",
          addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
        },
      ],
    },
  })
  const { walletId, addresses } = wallet.activity.result.createWalletResult!
  const key = newAgentKey()
  const merchant = '0x000000000000000000000000000000000000beef'
  const granted = await grantAgent(owner, {
    organizationId,
    walletId,
    agentName: `agent ${Date.now()}`,
    agentPublicKey: key.apiPublicKey,
    caip2: 'eip155:1',
    allowancePerDay: String(10n ** 16n),
    onlyTo: merchant,
  })
  const agent = clientOf(service.baseUrl, key)
  const pay = (value: bigint, nonce: number) =>
    agentTransfer(agent, { organizationId, from: addresses[0]!, to: merchant, value, chainId: 1, nonce })
  console.log('0.006 ETH:', 'signedTransaction' in (await pay(6n * 10n ** 15n, 0)) ? 'signed' : 'refused')
  const over = await pay(6n * 10n ** 15n, 1)
  console.log('another 0.006 ETH:', 'errorCode' in over ? `${over.errorCode}: ${over.message}` : 'signed')
  await revokeAgent(owner, { organizationId, ...granted })
  const revoked = await pay(1n, 2)
  console.log('after revoking:', 'errorCode' in revoked ? revoked.errorCode : 'signed')
}

if (typeof process !== 'undefined' && process.argv[1] === fileURLToPath(import.meta.url)) await main()
