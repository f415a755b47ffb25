// Stories run against the REAL local service inside the browser: `createService()` is passed to
// the provider as its `fetch`, and seed data is created through the same client actions an app
// uses (OTP sign-in read from the dev outbox, create_wallet, ...). Nothing is mocked.

import type { ProxySettings, SendTransactionStatus } from '@latchkey/protocol'
import type { Service } from '@latchkey/service'
import {
  createTestService,
  installSoftAuthenticator,
  latestCode,
  unsignedTransfer,
} from '@latchkey/service/testing'
import { ed25519 } from '@noble/curves/ed25519.js'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import type { Address } from '@solana/kit'
import { createLatchkey, type Latchkey, LatchkeyProvider } from 'latchkey'
import {
  addSessionFromKey,
  apiKeyStamper,
  completeOtpSignIn,
  createPolicy,
  createUsers,
  createUserTag,
  createWallet,
  importSigningKey,
  type OpenAuthorizationWindow,
  PopupBlockedError,
  signInWithOAuth,
  startOtpSignIn,
  submit,
  switchSession,
} from 'latchkey/core'
import type { ComponentType } from 'react'
// The in-page service's SQLite (sql.js) loads its WASM from here.
import sqlWasmUrl from 'sql.js/dist/sql-wasm.wasm?url'
import { encodeFunctionData, erc20Abi } from 'viem'
import { installCaptchaDouble } from '../../src/components/test/installCaptchaDouble.ts'
import { confirmTotpFactor } from '../../src/core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../src/core/actions/activities/createMfaPolicy.ts'
import { createRecoveryCodes } from '../../src/core/actions/activities/createRecoveryCodes.ts'
import { createSpendingLimit } from '../../src/core/actions/activities/createSpendingLimit.ts'
import { createTotpFactor } from '../../src/core/actions/activities/createTotpFactor.ts'
import { grantAgentAllowance } from '../../src/core/actions/activities/grantAgentAllowance.ts'
import { signTransaction } from '../../src/core/actions/activities/signTransaction.ts'
import { addPasskey } from '../../src/core/actions/auth/addPasskey.ts'
import { recordedSendService } from '../../src/core/test/recordedSendService.ts'
import { USDC_MINT, unsignedSplTransfer } from '../../src/core/test/splTransfer.ts'
import { totpCode } from '../../src/core/test/totpCode.ts'

export const SERVICE_URL = 'http://latchkey.local'

// Each story is a new page, where noble builds its table of base-point multiples on the first
// multiplication with each curve's base point (the service's keys, a session token, a wallet's
// address). Its default window (6 bits, for a process that signs for hours) makes a table of 2,080
// points per curve, about 0.4-0.6 s of a story on a busy machine for P-256 alone. A story makes a
// few multiplications, each as fast with 4 bits (776 points). Only the speed changes: the
// multiplication is the same constant-time one.
for (const curve of [p256, secp256k1, ed25519]) curve.Point.BASE.precompute(4)

export interface LiveOptions {
  /** Auth-proxy settings (enabled methods, on/off). */
  proxySettings?: Partial<ProxySettings>
  /** Sign a user in by e-mail OTP before the story renders. */
  signedIn?: boolean
  /** Wallets to create for the signed-in user. */
  wallets?: { walletName: string; chains: ('ethereum' | 'solana' | 'bitcoin')[] }[]
  /** Sign in a second session too (for the profile's session list). */
  secondSession?: boolean
  /**
   * Create an activity waiting for consensus (two root users, threshold 2), signed in as the
   * approver. `approverMfa`: the approver's own MFA policy covers new wallets (an authenticator
   * app, its secret in `live.totpSecret`), so their vote waits for their code. `decoys`: the
   * activity is a sign_raw_payload whose parameters start with 16 fields the requester added,
   * three named like real ones with a zero-width joiner (`payload\u200d`).
   */
  consensus?: boolean | { approverMfa: true } | { decoys: true }
  /**
   * Create an activity waiting on a policy: the app's back end (a non-root user) asks for a wallet,
   * which a policy lets it do once two users tagged `treasurer` approve; signed in as one of them.
   */
  policyConsensus?: boolean
  /** Lifetime of the signed-in session (short ones show the expiring and expired states). */
  sessionSeconds?: number
  /** Wait this long after seeding (e.g. for a short session to expire). */
  settleMs?: number
  /** `wallet_kit_config` never answers (the loading state). */
  hangConfig?: boolean
  /**
   * How the OAuth authorization window behaves: stays open, is blocked like a popup blocker would,
   * or (issue 38) is the in-page service's dev identity provider, where the person continues as
   * `as` (an e-mail address: the same one is the same OAuth identity).
   */
  oauthWindow?: 'pending' | 'blocked' | { as: string }
  /** Issue 38: another account signed up with OAuth as this e-mail address first (before the user signs in). */
  oauthTaken?: string
  /** Issue 38: sign in a user whose only way in is an API key (no e-mail), instead of by e-mail. */
  signedInWithApiKey?: boolean
  /** Announce a browser wallet through EIP-6963, backed by a real secp256k1 key in the page. */
  injectWallet?: boolean
  /**
   * The send path (`eth_send_transaction`, `get_send_transaction_status`) in the published shapes,
   * in front of the in-page service, which has no chain to broadcast to: each send's status reads
   * return `statuses` in turn (the last repeats); `'hang'` never answers the send.
   */
  send?: { statuses: SendTransactionStatus[] } | 'hang'
  /**
   * The service's CAPTCHA on sending codes, with a double of the provider's widget installed in
   * the page (stories reach no network, so the real script is never loaded): its siteverify is
   * answered in the page and every token passes. `failFirst`: the first widget reports an error.
   */
  captcha?: { provider: 'turnstile' | 'hcaptcha'; failFirst?: boolean }
  /**
   * Issue 37: grant an agent (a key in this client) 0.01 ETH a day on the first wallet's chain,
   * then let it sign `spentWei` with its own key; the user's session stays active. With `token`:
   * 25 USDC a day (an ERC-20 allowance) instead, of which it transfers `token.spent` base units.
   * With `spl`: 25 USDC a day as an SPL token on Solana (the first wallet a Solana one), of which
   * it transfers `spl.spent` base units with a `TransferChecked`.
   */
  agent?: { spentWei?: bigint; token?: { spent: bigint }; spl?: { spent: bigint } }
  /**
   * Issue 38: a confirmed authenticator app (its secret in `live.totpSecret`, the code of the
   * current step already used), ten recovery codes (`live.recoveryCodes`) and MFA policies: on
   * exports and signing (`'exports'`, `'signing'`: a code or a passkey), or signing with a passkey only.
   */
  mfa?: {
    recoveryCodes?: boolean
    /** Issue 37: `'limitChanges'` holds changes of a spending limit for a code or a passkey. */
    policies?: ('exports' | 'signing' | 'signingPasskeyOnly' | 'limitChanges')[]
  }
  /**
   * Issue 37: a spending limit of 1 ETH a day on the user's whole account on eip155:31337, of which
   * the user signs `spentWei` (from the first wallet's first address).
   */
  limits?: { spentWei?: bigint }
  /**
   * A passkey "Laptop" added to the signed-in user, made by a software authenticator put behind
   * `navigator.credentials` while the passkey is added and taken away after, so the story's own
   * WebAuthn calls (and the next story's) meet the browser's.
   */
  passkey?: boolean
}

export interface Live {
  service: Service
  client: Latchkey
  /** Id of the activity waiting for approval (`consensus`, `policyConsensus`). */
  activityId?: string
  walletIds: string[]
  addresses: string[]
  /** `mfa`: the authenticator app's base32 secret, and the recovery codes. */
  totpSecret?: string
  recoveryCodes?: string[]
}

const hexToBytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16))

export { latestCode }

async function signInByEmail(live: Live, email: string) {
  const started = await startOtpSignIn(live.client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
  const code = await latestCode(live.service, email)
  const { session } = await completeOtpSignIn(live.client, {
    ...started,
    otpCode: code,
    userName: 'Ana García',
  })
  return session
}

/** The dev root API key as a WebCrypto key, to act as the operator's back office would. */
async function devStamper(service: Service) {
  const { privateKey } = await importSigningKey(service.dev.apiPrivateKey)
  return apiKeyStamper({ publicKey: service.dev.apiPublicKey, privateKey })
}

/**
 * Two root users with keys in this client, quorum 2; user 1 asks for a wallet, user 2 is active.
 * `approverMfa`: user 2 first enrols an authenticator app and guards new wallets with it (quorum 1
 * meanwhile, then 2).
 */
async function seedConsensus(live: Live, variant: LiveOptions['consensus']) {
  const approverMfa = typeof variant === 'object' && 'approverMfa' in variant
  const decoys = typeof variant === 'object' && 'decoys' in variant
  const { client, service } = live
  await client.hydrate()
  const keys = [await client.keyStore.create(), await client.keyStore.create()]
  const { result } = await submit(
    client,
    'create_sub_organization',
    {
      subOrganizationName: 'Treasury',
      rootUsers: keys.map((key, index) => ({
        userName: index === 0 ? 'Ana García' : 'Omar Haddad',
        apiKeys: [
          {
            apiKeyName: 'session',
            publicKey: key.publicKey,
            curveType: 'API_KEY_CURVE_P256',
            expirationSeconds: '900',
          },
        ],
        authenticators: [],
        oauthProviders: [],
      })),
      rootQuorumThreshold: approverMfa || decoys ? 1 : 2,
    },
    { stamper: await devStamper(service), organizationId: service.dev.organizationId },
  )
  const sessions = keys.map((key, index) =>
    addSessionFromKey(client, {
      publicKey: key.publicKey,
      userId: result.rootUserIds[index]!,
      organizationId: result.subOrganizationId,
      lifetimeSeconds: 900,
      method: 'api-key',
      label: index === 0 ? 'ana@example.com' : 'omar@example.com',
    }),
  )
  if (approverMfa) {
    switchSession(client, { sessionId: sessions[1]!.id })
    await seedMfa(live, {})
    await createMfaPolicy(client, {
      mfaPolicyName: 'new wallets need a code',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    })
  }
  switchSession(client, { sessionId: sessions[0]!.id })
  // With decoys the wallet is made first (quorum 1), then a signature over a payload waits.
  const signWith = decoys
    ? (await createWallet(client, { walletName: 'Treasury reserve', chains: ['ethereum'] })).addresses[0]
    : undefined
  if (approverMfa || decoys)
    await submit(client, 'update_root_quorum', { threshold: 2, userIds: result.rootUserIds })
  try {
    if (signWith) await submit(client, 'sign_raw_payload', decoyParameters(signWith) as never)
    else await createWallet(client, { walletName: 'Treasury reserve', chains: ['ethereum'] })
  } catch (error) {
    live.activityId = (error as { details?: { activityId?: string } }).details?.activityId
  }
  if (!live.activityId) throw new Error('expected create_wallet to wait for consensus')
  switchSession(client, { sessionId: sessions[1]!.id })
}

/**
 * A sign_raw_payload's parameters as a requester can submit them (the service stores them as
 * given): 16 fields of its own first, three named like the real ones with a zero-width joiner.
 */
function decoyParameters(signWith: string): Record<string, string> {
  const decoys: Record<string, string> = {
    'signWith\u200d': '0x00000000000000000000000000000000000000d1',
    'payload\u200d': `0x${'00'.repeat(32)}`,
    'note\u200d': 'monthly payroll, approved by finance',
  }
  for (let i = 0; Object.keys(decoys).length < 16; i++) decoys[`memo${i}`] = 'ok'
  return {
    ...decoys,
    signWith,
    payload: `0x${'ee'.repeat(32)}`,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  }
}

/** A user's API key held by this client, as create_users and create_sub_organization take it. */
const apiKeyOf = (publicKey: string) => ({
  apiKeyName: 'session',
  publicKey,
  curveType: 'API_KEY_CURVE_P256' as const,
  expirationSeconds: '900',
})

/**
 * Delegated access with a consensus policy: Ana is the only root user; the back end and two
 * treasurers are non-root users with keys in this client. A policy lets the back end create
 * wallets once two users tagged `treasurer` approve (and another, about signing, does not match).
 * The back end asks for a wallet; Omar, a treasurer, is active.
 */
async function seedPolicyConsensus(live: Live) {
  const { client, service } = live
  await client.hydrate()
  const [ana, backEnd, omar, lina] = await Promise.all([1, 2, 3, 4].map(() => client.keyStore.create()))
  const { result } = await submit(
    client,
    'create_sub_organization',
    {
      subOrganizationName: 'Payments',
      rootUsers: [
        {
          userName: 'Ana García',
          apiKeys: [apiKeyOf(ana!.publicKey)],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
    },
    { stamper: await devStamper(service), organizationId: service.dev.organizationId },
  )
  const organizationId = result.subOrganizationId
  const sessionOf = (publicKey: string, userId: string, label: string) =>
    addSessionFromKey(client, {
      publicKey,
      userId,
      organizationId,
      lifetimeSeconds: 900,
      method: 'api-key',
      label,
    })
  sessionOf(ana!.publicKey, result.rootUserIds[0]!, 'ana@example.com')
  const { userTagId } = await createUserTag(client, { userTagName: 'treasurer', userIds: [] })
  const user = (userName: string, publicKey: string, userTags: string[]) => ({
    userName,
    apiKeys: [apiKeyOf(publicKey)],
    authenticators: [],
    oauthProviders: [],
    userTags,
  })
  const { userIds } = await createUsers(client, {
    users: [
      user('Payments back end', backEnd!.publicKey, []),
      user('Omar Haddad', omar!.publicKey, [userTagId]),
      user('Lina Sato', lina!.publicKey, [userTagId]),
    ],
  })
  await createPolicy(client, {
    policyName: 'Back end pays the payroll contract',
    effect: 'EFFECT_ALLOW',
    condition:
      "activity.resource == 'WALLET' && activity.action == 'SIGN' && eth.tx.to == '0x1111111111111111111111111111111111111111'",
    notes: 'Salaries, without approval.',
  })
  await createPolicy(client, {
    policyName: 'Two treasurers approve new wallets',
    effect: 'EFFECT_ALLOW',
    condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
    consensus: `approvers.filter(u, u.tags.contains('${userTagId}')).count() >= 2`,
    notes: 'The back end may open wallets for payouts once two treasurers agree.',
  })
  const backEndSession = sessionOf(backEnd!.publicKey, userIds[0]!, 'back end')
  const omarSession = sessionOf(omar!.publicKey, userIds[1]!, 'omar@example.com')
  sessionOf(lina!.publicKey, userIds[2]!, 'lina@example.com')
  switchSession(client, { sessionId: backEndSession.id })
  try {
    await createWallet(client, { walletName: 'Payouts', chains: ['ethereum'] })
  } catch (error) {
    live.activityId = (error as { details?: { activityId?: string } }).details?.activityId
  }
  if (!live.activityId) throw new Error('expected create_wallet to wait for the treasurers')
  switchSession(client, { sessionId: omarSession.id })
}

const never = (signal?: AbortSignal | null) =>
  new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason)))

/** An injected EIP-1193 wallet answering from a real secp256k1 key (what an extension does). */
function announceExampleWallet() {
  const privateKey = secp256k1.utils.randomSecretKey()
  const publicKey = secp256k1.getPublicKey(privateKey, false)
  const address = `0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(-20))}`
  const provider = {
    async request({ method, params }: { method: string; params?: unknown[] | Record<string, unknown> }) {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address]
      if (method === 'eth_chainId') return '0x1'
      if (method === 'personal_sign') {
        const message = hexToBytes(String((params as unknown[])[0]).slice(2))
        const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${message.length}`)
        const digest = keccak_256(new Uint8Array([...prefix, ...message]))
        const signature = secp256k1.sign(digest, privateKey, { prehash: false, format: 'recovered' })
        // noble's recovered format is recovery ‖ r ‖ s; wallets answer r ‖ s ‖ (27 + recovery).
        return `0x${bytesToHex(signature.slice(1))}${(27 + signature[0]!).toString(16)}`
      }
      throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 })
    },
  }
  const icon =
    'data:image/svg+xml,' +
    encodeURIComponent(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#f97316"/><path d="M9 11h14v10H9z" fill="#fff"/></svg>',
    )
  const info = {
    uuid: '6f1f3c0e-0000-4000-8000-000000000001',
    name: 'Example Wallet',
    icon,
    rdns: 'com.example.wallet',
  }
  const announce = () =>
    window.dispatchEvent(
      new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }),
    )
  window.addEventListener('eip6963:requestProvider', announce)
  announce()
}

// The CAPTCHA double of the story rendered last (a story without a CAPTCHA removes it).
let uninstallCaptcha = () => {}
const SITEVERIFY_URL = `${SERVICE_URL}/captcha-double/siteverify`

/** `createService` options for a CAPTCHA whose siteverify is answered in the page. */
function captchaServiceOptions(provider: 'turnstile' | 'hcaptcha') {
  return {
    captcha: {
      provider,
      siteKey: `${provider}-story-site-key`,
      secret: 'story-secret',
      verifyUrl: SITEVERIFY_URL,
    },
    fetch: async (input: RequestInfo | URL, init?: RequestInit) =>
      String(input instanceof Request ? input.url : input) === SITEVERIFY_URL
        ? new Response(JSON.stringify({ success: true }), { headers: { 'Content-Type': 'application/json' } })
        : fetch(input, init),
  }
}

export async function createLive(options: LiveOptions = {}): Promise<Live> {
  uninstallCaptcha()
  uninstallCaptcha = options.captcha
    ? installCaptchaDouble(options.captcha.provider, { failFirst: options.captcha.failFirst ?? false })
        .uninstall
    : () => {}
  const { service, clientConfig } = await createTestService({
    url: SERVICE_URL,
    memory: { sqlWasmUrl },
    ...(options.proxySettings ? { proxySettings: options.proxySettings } : {}),
    ...(options.captcha ? captchaServiceOptions(options.captcha.provider) : {}),
  })
  const serviceFetch: Service['fetch'] = options.hangConfig
    ? async (input, init) =>
        String(input instanceof Request ? input.url : input).endsWith('/v1/wallet_kit_config')
          ? never(init?.signal)
          : await service.fetch(input, init)
    : service.fetch
  if (options.injectWallet) announceExampleWallet()
  const send = options.send
  const clientFetch: Service['fetch'] =
    send === 'hang'
      ? async (input, init) =>
          String(input instanceof Request ? input.url : input).endsWith('/submit/eth_send_transaction')
            ? never(init?.signal)
            : await serviceFetch(input, init)
      : send
        ? recordedSendService(serviceFetch as typeof fetch, () => send.statuses).fetch
        : serviceFetch
  const oauthWindow = options.oauthWindow
  const client = createLatchkey({
    ...clientConfig,
    fetch: clientFetch,
    ...(typeof oauthWindow === 'object'
      ? { oauth: { openAuthorizationWindow: devIdpConsent(service, oauthWindow.as) } }
      : oauthWindow
        ? {
            oauth: {
              openAuthorizationWindow: ({ signal }) =>
                oauthWindow === 'blocked' ? Promise.reject(new PopupBlockedError()) : never(signal),
            },
          }
        : {}),
    // Stories must not leak sessions into each other through localStorage.
    storage: null,
    session: {
      autoRefresh: false,
      ...(options.sessionSeconds ? { expirationSeconds: options.sessionSeconds } : {}),
    },
  })
  const live: Live = { service, client, walletIds: [], addresses: [] }
  if (options.consensus) {
    await seedConsensus(live, options.consensus)
    return live
  }
  if (options.policyConsensus) {
    await seedPolicyConsensus(live)
    return live
  }
  if (options.oauthTaken)
    await signInWithOAuth(client, {
      provider: 'google',
      openAuthorizationWindow: devIdpConsent(service, options.oauthTaken),
    })
  if (options.signedInWithApiKey) {
    await seedApiKeyUser(live)
    return live
  }
  if (options.signedIn || options.wallets || options.secondSession) {
    if (options.secondSession) await signInByEmail(live, 'ana.work@example.com')
    await signInByEmail(live, 'ana@example.com')
    if (options.settleMs) await new Promise((resolve) => setTimeout(resolve, options.settleMs))
    for (const wallet of options.wallets ?? []) {
      const created = await createWallet(client, wallet)
      live.walletIds.push(created.walletId)
      live.addresses.push(...created.addresses)
    }
    if (options.agent) await seedAgent(live, options.agent)
    if (options.limits) await seedLimits(live, options.limits.spentWei ?? 0n)
    if (options.passkey) {
      const authenticator = installSoftAuthenticator()
      try {
        await addPasskey(client, { authenticatorName: 'Laptop' })
      } finally {
        authenticator.uninstall()
      }
    }
    if (options.mfa) await seedMfa(live, options.mfa)
  }
  return live
}

/** The dev identity provider's authorize page, answered in the page as `email` would answer it. */
function devIdpConsent(service: Service, email: string): OpenAuthorizationWindow {
  return async ({ url }) => {
    const form = new URLSearchParams(new URL(url).searchParams)
    form.set('email', email)
    form.set('name', 'Ana García')
    form.set('action', 'continue')
    const reply = await service.fetch(url.split('?')[0] as string, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    })
    return reply.headers.get('location') as string
  }
}

/** Ana, whose only way in is an API key held by this client (no e-mail, no passkey), signed in with it. */
async function seedApiKeyUser(live: Live) {
  const { client, service } = live
  await client.hydrate()
  const key = await client.keyStore.create()
  const { result } = await submit(
    client,
    'create_sub_organization',
    {
      subOrganizationName: 'Ana',
      rootUsers: [
        {
          userName: 'Ana García',
          apiKeys: [{ ...apiKeyOf(key.publicKey), apiKeyName: 'Laptop key' }],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
    },
    { stamper: await devStamper(service), organizationId: service.dev.organizationId },
  )
  addSessionFromKey(client, {
    publicKey: key.publicKey,
    userId: result.rootUserIds[0]!,
    organizationId: result.subOrganizationId,
    lifetimeSeconds: 900,
    method: 'api-key',
    label: 'Laptop key',
  })
}

async function seedMfa(live: Live, { recoveryCodes, policies = [] }: NonNullable<LiveOptions['mfa']>) {
  const { client } = live
  const { factorId, secret } = await createTotpFactor(client, { factorName: 'Phone' })
  await confirmTotpFactor(client, { factorId, code: totpCode(secret) })
  live.totpSecret = secret
  if (recoveryCodes) live.recoveryCodes = (await createRecoveryCodes(client, {})).recoveryCodes
  const codeOrPasskey = [
    {
      any: [
        { type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' as const },
        { type: 'AUTHENTICATION_TYPE_PASSKEY' as const },
      ],
    },
  ]
  for (const [order, policy] of policies.entries())
    await createMfaPolicy(client, {
      mfaPolicyName:
        policy === 'exports'
          ? 'latchkey: exports need a second factor'
          : policy === 'limitChanges'
            ? 'changing a spending limit needs a second factor'
            : `signing needs a second factor (${policy})`,
      condition:
        policy === 'exports'
          ? "activity.action == 'EXPORT'"
          : policy === 'limitChanges'
            ? "activity.type == 'ACTIVITY_TYPE_LATCHKEY_UPDATE_SPENDING_LIMIT'"
            : "activity.action == 'SIGN'",
      requiredAuthenticationMethods:
        policy === 'signingPasskeyOnly'
          ? [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }]
          : codeOrPasskey,
      order,
    })
}

async function seedLimits(live: Live, spent: bigint) {
  const { client } = live
  const { userId } = client.store.getState().sessions[client.store.getState().activeId as string]!
  await createSpendingLimit(client, {
    spendingLimitName: 'Daily limit of 1 ETH',
    scope: { type: 'SPENDING_LIMIT_SCOPE_USER', userId },
    window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
    asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: 'eip155:31337' },
    amount: (10n ** 18n).toString(),
  })
  if (spent === 0n) return
  await signTransaction(client, {
    signWith: live.addresses[0]!,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    // Paying no fee: the limit shows the value alone (a fee the account pays counts too).
    unsignedTransaction: unsignedTransfer({
      chainId: 31337,
      nonce: 1,
      to: SHOP,
      value: spent,
      maxFeePerGas: 0n,
    }),
  })
}

const STORY_USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'

const SHOP = '0x00000000000000000000000000000000000f00d5'
const SHOP_SOL = 'Shop111111111111111111111111111111111111111' as Address

/** What an allowance of `seedAgent` counts, and how its agent spends `spent` of it. */
function agentAsset(options: NonNullable<LiveOptions['agent']>, from: string) {
  if (options.spl) {
    const asset = {
      type: 'SPENDING_LIMIT_ASSET_SPL',
      caip2: 'solana:mainnet',
      mint: USDC_MINT,
    } as const
    return {
      grant: { caip2: 'solana:mainnet', amount: '25000000', asset, token: { symbol: 'USDC', decimals: 6 } },
      spent: options.spl.spent,
      type: 'TRANSACTION_TYPE_SOLANA' as const,
      transaction: () =>
        unsignedSplTransfer({ from: from as Address, to: SHOP_SOL, amount: options.spl!.spent }),
    }
  }
  const token = options.token
  const ethereum = (call: { to: string; value?: bigint; data?: string }) =>
    unsignedTransfer({ chainId: 31337, nonce: 0, gas: 60_000n, value: 0n, maxFeePerGas: 0n, ...call })
  return token
    ? {
        grant: {
          caip2: 'eip155:31337',
          amount: '25000000',
          asset: { type: 'SPENDING_LIMIT_ASSET_ERC20', caip2: 'eip155:31337', contract: STORY_USDC } as const,
          token: { symbol: 'USDC', decimals: 6 },
        },
        spent: token.spent,
        type: 'TRANSACTION_TYPE_ETHEREUM' as const,
        transaction: async () =>
          ethereum({
            to: STORY_USDC,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [SHOP, token.spent] }),
          }),
      }
    : {
        grant: { caip2: 'eip155:31337', amount: '10000000000000000' },
        spent: options.spentWei ?? 0n,
        type: 'TRANSACTION_TYPE_ETHEREUM' as const,
        transaction: async () => ethereum({ to: SHOP, value: options.spentWei ?? 0n }),
      }
}

async function seedAgent(live: Live, options: NonNullable<LiveOptions['agent']>) {
  const { client } = live
  const user = client.store.getState().activeId as string
  const { organizationId } = client.store.getState().sessions[user]!
  const key = await client.keyStore.create()
  const from = live.addresses[0]!
  const what = agentAsset(options, from)
  const grant = await grantAgentAllowance(client, {
    agentName: 'Shopping agent',
    publicKey: key.publicKey,
    period: 'PERIOD_DAY',
    ...(options.spl ? {} : { allowedDestinations: [SHOP] }),
    ...what.grant,
  })
  if (what.spent === 0n) return
  const agent = addSessionFromKey(client, {
    publicKey: key.publicKey,
    userId: grant.userId,
    organizationId,
    lifetimeSeconds: 3600,
    method: 'api-key',
    label: 'agent',
  })
  await signTransaction(client, {
    signWith: from,
    type: what.type,
    unsignedTransaction: await what.transaction(),
    sessionId: agent.id,
  })
  switchSession(client, { sessionId: user })
}

/** Loader: a fresh service + client per story render, seeded from `parameters.live`. */
export const liveLoader = async (context: { parameters: { live?: LiveOptions } }) => ({
  live: await createLive(context.parameters.live ?? {}),
})

/** Decorator: the provider over the loaded client. */
export const withLive = (Story: ComponentType, context: { loaded: Record<string, unknown> }) => {
  const live = context.loaded.live as Live
  return (
    <LatchkeyProvider client={live.client}>
      <Story />
    </LatchkeyProvider>
  )
}

export const liveDecorators = { loaders: [liveLoader], decorators: [withLive] }
