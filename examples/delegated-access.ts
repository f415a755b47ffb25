/**
 * Delegated access: your app's back end signs for a user, within a policy the user agreed to.
 *
 * The end user stays the only root user of their sub-organization. Your back end holds a P-256
 * API key; the user (from your front end, signed in) adds the back end as a non-root user with
 * that key and a policy such as "may sign ETH transfers to X only, at a bounded fee". The back end
 * then uses `latchkey/core` like any client: what the policy allows is signed, anything else is refused
 * with `PERMISSION_DENIED` and `details.outcome` `OUTCOME_DENY_IMPLICIT` (no policy matched) or
 * `OUTCOME_DENY_EXPLICIT` (a DENY policy matched); `get_policy_evaluations` shows why.
 *
 * Run the whole recipe against a local service (it plays the end user too):
 *   npm run -s service -- --port 8787 --json > /tmp/latchkey.json &
 *   until [ -s /tmp/latchkey.json ]; do sleep 1; done
 *   LATCHKEY_SERVICE_JSON="$(head -1 /tmp/latchkey.json)" npx tsx examples/delegated-access.ts
 */
import { fileURLToPath } from 'node:url'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, randomBytes } from '@noble/hashes/utils.js'
import {
  addSessionFromKey,
  createLatchkey,
  createPolicies,
  createUsers,
  importSigningKey,
  type KeyStore,
  type Latchkey,
  LatchkeyError,
  type PolicyParams,
  type StoredKey,
} from 'latchkey/core'

/** A back-end API key: keep `privateKeyHex` in your secrets, give `publicKey` to the user's app. */
export interface BackendKey {
  /** Compressed P-256 public key, hex (what `create_users` registers). */
  publicKey: string
  /** 32-byte P-256 private key, hex. */
  privateKeyHex: string
}

export function newBackendKey(): BackendKey {
  const privateKey = p256.utils.randomSecretKey()
  return { publicKey: bytesToHex(p256.getPublicKey(privateKey, true)), privateKeyHex: bytesToHex(privateKey) }
}

/** A key store holding only the back end's key (the client never generates keys here). */
function fixedKeyStore(key: StoredKey): KeyStore {
  return {
    kind: 'memory',
    create: async () => {
      throw new Error('the back end signs with its API key only')
    },
    get: async (publicKey) => (publicKey === key.publicKey ? key : undefined),
    list: async () => [key],
    delete: async () => {},
    cleanup: async () => [],
  }
}

export interface BackendClientOptions {
  baseUrl: string
  /** The parent organization's auth proxy config id (printed by `latchkey-service dev`). */
  authProxyConfigId: string
  /** The end user's sub-organization, and the back end's user id in it (from `create_users`). */
  organizationId: string
  userId: string
  privateKeyHex: string
}

/**
 * A `latchkey/core` client acting as the back end: every request is stamped with its API key
 * (a session whose key is that API key), so every action and query works as usual.
 */
export async function backendClient(options: BackendClientOptions): Promise<Latchkey> {
  const key = await importSigningKey(options.privateKeyHex)
  const client = createLatchkey({
    baseUrl: options.baseUrl,
    authProxyUrl: options.baseUrl,
    authProxyConfigId: options.authProxyConfigId,
    organizationId: options.organizationId,
    keyStore: fixedKeyStore(key),
    storage: null,
    session: { autoRefresh: false },
  })
  addSessionFromKey(client, {
    publicKey: key.publicKey,
    userId: options.userId,
    organizationId: options.organizationId,
    // An API key does not expire with a session; the service still checks it on every request.
    lifetimeSeconds: 10 * 365 * 24 * 3600,
    method: 'api-key',
    label: 'App back end',
  })
  return client
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/
/** An id as the service makes them (UUIDs, ULIDs): nothing that could end a quoted string. */
const ID = /^[A-Za-z0-9_-]{1,128}$/

/** The least gas any transaction uses (a plain transfer to an account with no code, on Ethereum). */
const TRANSFER_GAS = 21_000n

function checkDelegation({ recipient, chainId, maxWei, maxGas, maxFeePerGas }: Delegation): void {
  if (typeof recipient !== 'string' || !EVM_ADDRESS.test(recipient))
    throw new RangeError('recipient: not an EVM address (0x and 40 hex digits)')
  if (!Number.isSafeInteger(chainId) || chainId < 1) throw new RangeError('chainId: not an EIP-155 chain id')
  if (maxWei !== undefined && (typeof maxWei !== 'bigint' || maxWei < 0n))
    throw new RangeError('maxWei: not a whole number of wei')
  if (typeof maxFeePerGas !== 'bigint' || maxFeePerGas < 0n)
    throw new RangeError('maxFeePerGas: not a whole number of wei')
  if (maxGas !== undefined && (typeof maxGas !== 'bigint' || maxGas < TRANSFER_GAS))
    throw new RangeError(`maxGas: not a whole number of gas of at least ${TRANSFER_GAS}`)
}

/** What the end user agrees the back end may do: send ETH to `recipient` on one chain. */
export interface Delegation {
  /** The one address the back end may pay. */
  recipient: string
  /** The chain it may pay on (EIP-155 id, e.g. 8453 for Base). */
  chainId: number
  /** With it, a DENY policy refuses any transfer above it (wei), whoever asks. */
  maxWei?: bigint
  /**
   * The highest `maxFeePerGas` (wei, as viem's field) the back end may sign. A transaction pays
   * the block's producer up to `gas × maxFeePerGas` whatever it sends, so this and `maxGas` bound
   * the fee of one signature: without them, "1 wei to X" at 100,000 gwei a gas moves 2.1 ETH.
   * Choose it for the chain: the highest price you would ever pay there.
   */
  maxFeePerGas: bigint
  /**
   * The highest gas limit the back end may sign. 21,000 is a plain transfer to an account with no
   * code on Ethereum, OP Stack chains (Optimism, Base) and anvil; a recipient that is a contract
   * (a Safe, a smart account) runs code and needs more, and on Arbitrum the gas limit also pays
   * for posting to L1 (a transfer estimates well above 21,000): use `eth_estimateGas` with room.
   * @default 21000n
   */
  maxGas?: bigint
}

/**
 * The policies of the recipe: the back end (and only it) may sign plain ETH transfers to
 * `recipient` on `chainId`, nothing else. The chain is named because the same key and address
 * hold funds on every EVM chain (a transfer signed for another chain, or a legacy one naming none,
 * spends there), and the calldata is empty because a transaction "to X" with calldata is a call of
 * X: were X a token's contract or a wallet that forwards calls, `transfer(anyone, everything)`.
 *
 * The transaction must be EIP-1559 with at most `maxGas` gas at most `maxFeePerGas` a gas: the fee
 * leaves the account too (to the block's producer, who may be the back end or pay it), so the
 * value's limit alone does not bound what a signature costs the user. Other types do not match
 * (a legacy transaction has no `max_fee_per_gas`: reading it would make the policy an error,
 * which allows nothing either).
 *
 * `recipient` usually comes from a form or a request: it is checked before it goes into the
 * condition (a quote in it would rewrite the condition: `<addr>' || true || 'x` allows anything),
 * and anything but an EVM address, a chain id or a whole number of wei or gas throws (a RangeError
 * naming the argument).
 */
export function delegationPolicies(backendUserId: string, delegation: Delegation): PolicyParams[] {
  const { recipient, chainId, maxWei, maxFeePerGas, maxGas = TRANSFER_GAS } = delegation
  checkDelegation(delegation)
  if (!ID.test(backendUserId)) throw new RangeError('backendUserId: not a user id')
  const policies: PolicyParams[] = [
    {
      policyName: `Back end may pay ${recipient.toLowerCase()} on chain ${chainId}`,
      effect: 'EFFECT_ALLOW',
      condition:
        "activity.resource == 'WALLET' && activity.action == 'SIGN'" +
        ` && eth.tx.chain_id == ${chainId} && eth.tx.to == '${recipient.toLowerCase()}' && eth.tx.data == '0x'` +
        ` && eth.tx.type == 'eip1559' && eth.tx.gas <= ${maxGas} && eth.tx.max_fee_per_gas <= ${maxFeePerGas}`,
      consensus: `approvers.all(user, user.id == '${backendUserId}')`,
      notes: 'delegated access',
    },
  ]
  if (maxWei !== undefined)
    policies.push({
      policyName: `No transfer above ${maxWei} wei`,
      effect: 'EFFECT_DENY',
      condition: `activity.action == 'SIGN' && eth.tx.value > ${maxWei}`,
      notes: 'delegated access',
    })
  return policies
}

/**
 * What the end user's app runs (signed in as the root user): adds the back end as a non-root user
 * with its API key, and the policies. Returns the ids the back end needs.
 */
export async function grantBackendAccess(
  endUser: Latchkey,
  backend: Delegation & { publicKey: string },
): Promise<{ userId: string; policyIds: string[] }> {
  checkDelegation(backend) // before anything is made
  const { userIds } = await createUsers(endUser, {
    users: [
      {
        userName: 'App back end',
        apiKeys: [{ apiKeyName: 'back end', publicKey: backend.publicKey, curveType: 'API_KEY_CURVE_P256' }],
        authenticators: [],
        oauthProviders: [],
        userTags: [],
      },
    ],
  })
  const userId = userIds[0] as string
  const { policyIds } = await createPolicies(endUser, {
    policies: delegationPolicies(userId, backend),
  })
  return { userId, policyIds }
}

/** `{ outcome, activityId }` of a refusal, or undefined for any other error. */
export function refusalOf(error: unknown): { outcome: string; activityId: string } | undefined {
  if (!(error instanceof LatchkeyError) || error.code !== 'PERMISSION_DENIED') return undefined
  const details = (error.details ?? {}) as { outcome?: unknown; activityId?: unknown }
  return typeof details.outcome === 'string' && typeof details.activityId === 'string'
    ? { outcome: details.outcome, activityId: details.activityId }
    : undefined
}

async function main() {
  const { serializeTransaction } = await import('viem')
  const { createSubOrganization, createWallet, getPolicyEvaluations, signTransaction } = await import(
    'latchkey/core'
  )
  const service = JSON.parse(process.env.LATCHKEY_SERVICE_JSON ?? 'null') as {
    baseUrl: string
    organizationId: string
    authProxyConfigId: string
    apiPrivateKey: string
  } | null
  if (!service) throw new Error('set LATCHKEY_SERVICE_JSON to the first line of `latchkey-service --json`')

  // 1. The end user signs up (here: a sub-organization with a root API key, made with the dev root key).
  const parent = await backendClient({ ...service, userId: 'dev', privateKeyHex: service.apiPrivateKey })
  const endUserKey = newBackendKey()
  const { subOrganizationId, rootUserIds } = await createSubOrganization(parent, {
    subOrganizationName: `Delegated access demo ${Date.now()}`,
    rootQuorumThreshold: 1,
    rootUsers: [
      {
        userName: 'End user',
        apiKeys: [
          { apiKeyName: 'end user', publicKey: endUserKey.publicKey, curveType: 'API_KEY_CURVE_P256' },
        ],
        authenticators: [],
        oauthProviders: [],
      },
    ],
  })
  const endUser = await backendClient({
    ...service,
    organizationId: subOrganizationId,
    userId: rootUserIds[0] as string,
    privateKeyHex: endUserKey.privateKeyHex,
  })
  const { addresses } = await createWallet(endUser, { walletName: 'Main', chains: ['ethereum'] })
  const from = addresses[0] as string

  // 2. The end user grants the back end "may sign ETH transfers to X only, on this chain, paying at
  // most 21,000 gas at 50 gwei" (and nothing above 1 ETH).
  const x = `0x${bytesToHex(randomBytes(20))}`
  const y = `0x${bytesToHex(randomBytes(20))}`
  const key = newBackendKey()
  const grant = await grantBackendAccess(endUser, {
    publicKey: key.publicKey,
    recipient: x,
    chainId: 31337,
    maxWei: 10n ** 18n,
    maxFeePerGas: 50n * 10n ** 9n,
  })
  console.log('back end user', grant.userId, 'policies', grant.policyIds.join(', '))

  // 3. The back end, with its API key only.
  const backend = await backendClient({
    ...service,
    organizationId: subOrganizationId,
    userId: grant.userId,
    privateKeyHex: key.privateKeyHex,
  })
  const transfer = (
    to: string,
    value: bigint,
    nonce: number,
    more: { chainId?: number; data?: `0x${string}`; maxFeePerGas?: bigint } = {},
  ) =>
    signTransaction(backend, {
      signWith: from,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: serializeTransaction({
        type: 'eip1559',
        chainId: more.chainId ?? 31337,
        nonce,
        gas: 21000n,
        maxFeePerGas: more.maxFeePerGas ?? 2n * 10n ** 9n,
        maxPriorityFeePerGas: more.maxFeePerGas ?? 10n ** 9n,
        to: to as `0x${string}`,
        value,
        ...(more.data ? { data: more.data } : {}),
      }),
    })
  const signed = await transfer(x, 10n ** 15n, 0)
  console.log('transfer to X signed:', `0x${signed.signedTransaction.slice(0, 24)}…`)
  // A call of X (were X a token: transfer(Y, 1000)).
  const call = `0xa9059cbb${y.slice(2).padStart(64, '0')}${(1000).toString(16).padStart(64, '0')}` as const
  for (const [label, to, value, more] of [
    ['transfer to Y', y, 10n ** 15n, {}],
    ['2 ETH to X', x, 2n * 10n ** 18n, {}],
    ['transfer to X on chain 1', x, 10n ** 15n, { chainId: 1 }],
    ['a call of X', x, 0n, { data: call }],
    // 1 wei, and 2.1 ETH of fee to the block's producer (who may be the back end, or pay it).
    ['1 wei to X at 100,000 gwei a gas', x, 1n, { maxFeePerGas: 10n ** 14n }],
  ] as const) {
    const refusal = await transfer(to, value, 1, more).then(
      () => undefined,
      (error: unknown) => refusalOf(error) ?? Promise.reject(error),
    )
    if (!refusal) throw new Error(`${label} should have been refused`)
    const { policyEvaluations } = await getPolicyEvaluations(backend, { activityId: refusal.activityId })
    console.log(
      `${label} refused: ${refusal.outcome};`,
      policyEvaluations[0]?.policyEvaluations
        .map((e) => `${e.policyId ?? 'decision'}=${e.outcome}`)
        .join(' '),
    )
  }
}

// Run as a script (the playground imports this module in the browser, where there is no `process`).
if (typeof process !== 'undefined' && process.argv[1] === fileURLToPath(import.meta.url)) await main()
