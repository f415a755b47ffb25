import {
  AgentAllowance,
  createLatchkey,
  SpendingLimitExceededError,
  useLatchkey,
  useSession,
  useSpendingLimits,
  useUsers,
  useWalletAccounts,
} from 'latchkey'
import { addSessionFromKey, getCallsStatus, type Latchkey, sendCalls } from 'latchkey/core'
import { useEffect, useRef, useState } from 'react'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  formatEther,
  http,
  parseEther,
} from 'viem'
import { agentLimitOf, grantOf, refusalWords, runSummary } from './agentOutcome.ts'
import { networkName } from './networkName.ts'
import type { EvmConfig } from './SendTransactionPanel.tsx'
import type { Route } from './useRoute.ts'

/** Where the agent may pay: one shop address. */
export const AGENT_SHOP = '0x00000000000000000000000000000000000f00d5'
const SENDS = 8
const EACH = parseEther('0.002')

type Outcome =
  | { index: number; state: 'signed'; id: string }
  | { index: number; state: 'refused'; reason: string }

/**
 * Issue 37's demo: the user grants an agent 0.01 ETH a day to one address (`<AgentAllowance/>`),
 * then the agent (a client in this page holding its own key, as a back end would) fires eight
 * sponsored 0.002 ETH sends at once. The service lets exactly 0.01 ETH through and refuses the rest.
 */
export function AgentPage({
  openSignIn,
  evm,
  navigate,
}: {
  openSignIn: () => void
  evm: EvmConfig | null
  /** To the App page, where the user makes the wallet the agent spends from. */
  navigate: (to: Route) => void
}) {
  const session = useSession()
  if (!session || !evm)
    return (
      <section className="pg-card" aria-labelledby="pg-agent-title">
        <h1 id="pg-agent-title">Agent allowance</h1>
        <p className="pg-card-lead">
          {evm
            ? 'Sign in to give an agent an allowance it cannot overspend, even in parallel.'
            : 'This page needs the local EVM node (npm start runs it).'}
        </p>
        {evm ? (
          <button type="button" className="pg-button pg-button-primary" onClick={openSignIn}>
            Sign in
          </button>
        ) : null}
      </section>
    )
  return <AgentDemo evm={evm} organizationId={session.organizationId} navigate={navigate} />
}

/** The scope of the agent's key in the browser's key store: the user's client never sweeps it. */
const AGENT_SCOPE = 'playground-agent'

/**
 * The agent's own client and key. The key is a non-extractable P-256 key kept in this browser's
 * IndexedDB under its own scope, as a back end keeps its key: reloading the page or coming back to it
 * finds the same agent, and the allowance granted to it. Only its public key leaves it. Where
 * IndexedDB is unavailable, a key in memory (lost on reload).
 */
function useAgentClient() {
  const client = useLatchkey()
  const [agent, setAgent] = useState<{ client: Latchkey; publicKey: string } | null>(null)
  useEffect(() => {
    let live = true
    const open = (keyStore: 'indexeddb' | 'memory') =>
      createLatchkey({ ...client.config, keyStore, storage: null, session: { autoRefresh: false } })
    let agentClient = open('indexeddb')
    const keyOf = async (of: Latchkey) =>
      (await of.keyStore.list()).find((key) => key.scope === AGENT_SCOPE) ??
      (await of.keyStore.create({ scope: AGENT_SCOPE }))
    void agentClient
      .hydrate()
      .then(() => keyOf(agentClient))
      .catch(async () => {
        agentClient.destroy()
        agentClient = open('memory')
        await agentClient.hydrate()
        return keyOf(agentClient)
      })
      .then(({ publicKey }) => live && setAgent({ client: agentClient, publicKey }))
    return () => {
      live = false
      agentClient.destroy()
    }
  }, [client])
  return agent
}

function AgentDemo({
  evm,
  organizationId,
  navigate,
}: {
  evm: EvmConfig
  organizationId: string
  navigate: (to: Route) => void
}) {
  const agent = useAgentClient()
  const accounts = useWalletAccounts()
  const from = accounts.data?.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address
  const limits = useSpendingLimits()
  const users = useUsers()
  // The allowance granted to this page's agent: its user (to sign in as) and its limit (to read back).
  const [fresh, setFresh] = useState<{ userId: string; spendingLimitId: string } | null>(null)
  const [revoked, setRevoked] = useState<string | null>(null)
  // Granted before this page opened (a reload, a visit to another page): found by the agent's key,
  // unless revoked here (the listing may not have caught up).
  const listed = grantOf(agent?.publicKey, users.data?.users, limits.data?.spendingLimits)
  const grant = fresh ?? (listed && listed.spendingLimitId !== revoked ? listed : null)
  const agentUserId = grant?.userId ?? null
  const [outcomes, setOutcomes] = useState<Outcome[] | null>(null)
  const [running, setRunning] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  // The run button is disabled while the agent runs, which drops the keyboard focus: the results
  // take it once shown (a run clears them first, so each run's results are new).
  const resultsRef = useRef<HTMLOListElement>(null)
  useEffect(() => {
    if (outcomes) resultsRef.current?.focus()
  }, [outcomes])

  const run = async () => {
    if (!agent || !from || !agentUserId) return
    setError(null)
    setOutcomes(null)
    try {
      const chain = defineChain({
        id: evm.chainId,
        name: networkName(evm.caip2),
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [evm.rpcUrl] } },
      })
      const node = createPublicClient({ chain, transport: http(), pollingInterval: 250 })
      if ((await node.getBalance({ address: from as Address })) < parseEther('0.1')) {
        setRunning('Funding the account from the faucet…')
        const faucet = createWalletClient({ account: evm.faucetAccount as Address, chain, transport: http() })
        await node.waitForTransactionReceipt({
          hash: await faucet.sendTransaction({ to: from as Address, value: parseEther('1') }),
        })
      }
      // The agent signs in with its key (an API key never expires with a session).
      const { sessions, activeId } = agent.client.store.getState()
      if (!activeId || !sessions[activeId])
        addSessionFromKey(agent.client, {
          publicKey: agent.publicKey,
          userId: agentUserId,
          organizationId,
          lifetimeSeconds: 24 * 3600,
          method: 'api-key',
          label: 'agent',
        })
      setRunning(`The agent fires ${SENDS} sends of ${formatEther(EACH)} ETH at once…`)
      const results = await Promise.all(
        Array.from({ length: SENDS }, (_, index) => {
          // Each send its own activity, though all eight are equal and fired in one moment: the kit
          // stamps each body with a time after the last one's (core/transport/activity.ts).
          // Sponsored: the operator's sponsor pays the gas, so the allowance counts what is sent.
          // An unsponsored send's fee would count against it too, at its most.
          return sendCalls(agent.client, {
            from,
            caip2: evm.caip2,
            calls: [{ to: AGENT_SHOP, value: EACH.toString() }],
            sponsor: true,
          }).then(
            async (sent): Promise<Outcome> => {
              // The transaction's hash once the sponsor has broadcast it and it is mined; the
              // send's status id if that does not come (it is still signed and counted).
              const status = await getCallsStatus(agent.client, {
                sendTransactionStatusId: sent.sendTransactionStatusId,
                wait: true,
                timeoutMs: 30_000,
              }).catch(() => undefined)
              const hash = status?.eth?.txHash
              return {
                index: index + 1,
                state: 'signed',
                id: hash ? `transaction ${hash}` : `send ${sent.sendTransactionStatusId}`,
              }
            },
            (failure: unknown): Outcome => ({
              index: index + 1,
              state: 'refused',
              reason: refusalWords(
                failure instanceof SpendingLimitExceededError
                  ? failure
                  : { code: (failure as { code?: string }).code, message: (failure as Error).message },
              ),
            }),
          )
        }),
      )
      setOutcomes(results)
      await limits.refetch()
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setRunning(null)
    }
  }

  const signed = outcomes?.filter((o) => o.state === 'signed').length ?? 0
  const agentLimit = agentLimitOf(limits.data?.spendingLimits, grant?.spendingLimitId ?? null)
  // With no allowance of its own, any agent allowance listed is another key's (another browser's agent).
  const earlierAgent = limits.data?.spendingLimits.some(
    (limit) => limit.scope.type === 'SPENDING_LIMIT_SCOPE_API_KEY',
  )
  const status =
    running ??
    (!agentUserId
      ? earlierAgent
        ? 'Grant this page’s agent (the key above) an allowance first. The allowance listed above belongs to another key.'
        : 'Grant the agent an allowance first.'
      : !from
        ? 'Create an Ethereum wallet on the App page first: the agent spends from it.'
        : outcomes
          ? runSummary(signed, outcomes.length - signed, EACH)
          : '')
  return (
    <>
      <section className="pg-card" aria-labelledby="pg-agent-title">
        <h1 id="pg-agent-title">Agent allowance</h1>
        <p className="pg-card-lead">
          Grant the agent below <strong>0.01 ETH a day</strong>, only to <code>{AGENT_SHOP}</code>. Its key
          was made in this browser and stays in it, as a back end keeps its own; only the public key goes to
          the service.
        </p>
        <dl className="pg-result">
          <dt>Your account</dt>
          <dd className="pg-mono">
            {from ?? (
              <>
                none yet:{' '}
                <a
                  href="/"
                  onClick={(event) => {
                    event.preventDefault()
                    navigate('/')
                  }}
                >
                  create an Ethereum wallet on the App page
                </a>
              </>
            )}
          </dd>
          <dt>Agent public key</dt>
          <dd className="pg-mono" data-testid="agent-public-key">
            {agent?.publicKey ?? 'generating…'}
          </dd>
        </dl>
      </section>
      {agent ? (
        <AgentAllowance
          caip2={evm.caip2}
          agentPublicKey={agent.publicKey}
          defaultAgentName="Playground agent"
          onGranted={(granted) =>
            setFresh({ userId: granted.userId, spendingLimitId: granted.spendingLimitId })
          }
          onRevoked={(taken) => {
            // Another agent's allowance revoked leaves this one's standing.
            if (taken.spendingLimitId !== grant?.spendingLimitId) return
            setRevoked(taken.spendingLimitId)
            setFresh(null)
            setOutcomes(null)
          }}
        />
      ) : null}
      <section className="pg-card" aria-labelledby="pg-agent-run-title">
        <h2 id="pg-agent-run-title">The agent tries to overspend</h2>
        <p className="pg-card-lead">
          {SENDS} sends of {formatEther(EACH)} ETH ({formatEther(EACH * BigInt(SENDS))} ETH in all), fired in
          parallel with the agent’s key against its 0.01 ETH allowance. The sponsor pays their gas; a fee the
          account pays itself counts against the allowance too.
        </p>
        <button
          type="button"
          className="pg-button pg-button-primary"
          disabled={!agentUserId || !from || running !== null}
          onClick={() => void run()}
        >
          Run the agent
        </button>
        <p className="pg-muted" role="status">
          {status}
        </p>
        {error ? (
          <p className="pg-error" role="alert">
            {error}
          </p>
        ) : null}
        {outcomes ? (
          <>
            <ol className="pg-list" aria-label="Sends" ref={resultsRef} tabIndex={-1}>
              {outcomes.map((o) => (
                <li key={o.index} data-testid="agent-send" data-state={o.state}>
                  Send {o.index}: {o.state === 'signed' ? `signed (${o.id})` : `refused — ${o.reason}`}
                </li>
              ))}
            </ol>
            <dl className="pg-result">
              <dt>Signed</dt>
              <dd data-testid="agent-signed">{signed}</dd>
              <dt>Refused</dt>
              <dd data-testid="agent-refused">{outcomes.length - signed}</dd>
              <dt>Total spent</dt>
              <dd data-testid="agent-total">{formatEther(EACH * BigInt(signed))} ETH</dd>
              <dt>Used, as the service counts it</dt>
              <dd data-testid="agent-used">
                {agentLimit
                  ? `${formatEther(BigInt(agentLimit.used))} of ${formatEther(BigInt(agentLimit.amount))} ETH`
                  : '—'}
              </dd>
            </dl>
          </>
        ) : null}
      </section>
    </>
  )
}
