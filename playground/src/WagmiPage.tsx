import { QueryClientProvider } from '@tanstack/react-query'
import { type Latchkey, useLatchkey, useLatchkeyQueryClient } from 'latchkey'
import { latchkey } from 'latchkey/wagmi'
import { memo, useId, useState } from 'react'
import {
  createWalletClient,
  defineChain,
  formatEther,
  http,
  isAddress,
  parseEther,
  verifyMessage,
} from 'viem'
import { waitForTransactionReceipt } from 'viem/actions'
import {
  type Config,
  createConfig,
  useBalance,
  useChains,
  useConnection,
  useSendTransaction,
  useSignMessage,
  useWaitForTransactionReceipt,
  WagmiProvider,
} from 'wagmi'
import type { PlaygroundConfig } from './loadPlaygroundConfig.ts'
import { networkName } from './networkName.ts'
import { SponsoredBatchCard } from './SponsoredBatchCard.tsx'
import { TransferFields } from './TransferFields.tsx'

type Evm = NonNullable<PlaygroundConfig['evm']>

const BURN_ADDRESS = '0x000000000000000000000000000000000000dEaD'

/**
 * One wagmi config per kit client, as an app would create it once at module level: coming back
 * to this page reuses it (its connector keeps following the same session store).
 */
const wagmiConfigs = new WeakMap<Latchkey, Config>()
function wagmiConfigFor(client: Latchkey, evm: Evm): Config {
  let config = wagmiConfigs.get(client)
  if (!config) {
    const chain = defineChain({
      id: evm.chainId,
      name: networkName(evm.caip2),
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [evm.rpcUrl] } },
    })
    config = createConfig({
      chains: [chain],
      connectors: [latchkey({ client, createWallet: { walletName: 'Wallet' } })],
      transports: { [chain.id]: http(evm.rpcUrl) },
      // Only the Latchkey wallet here: no browser-wallet discovery.
      multiInjectedProviderDiscovery: false,
    })
    wagmiConfigs.set(client, config)
  }
  return config
}

/**
 * wagmi over Latchkey: a wagmi config whose only connector is `latchkey({ client })`, sharing the
 * kit's QueryClient. Nothing here calls `useConnect`: signing in connects wagmi, signing out
 * disconnects it.
 *
 * Memoized: wagmi's `<WagmiProvider>` reconnects (a wagmi state update) each time it renders, so
 * a render caused by the page around it (the sign-in dialog opening) would update this page's
 * wagmi hooks while rendering the provider, which React reports as an error. Apps keep
 * `<WagmiProvider>` near their root for the same reason.
 */
export const WagmiPage = memo(function WagmiPage({
  config,
  openSignIn,
}: {
  config: PlaygroundConfig
  openSignIn: () => void
}) {
  const client = useLatchkey()
  const queryClient = useLatchkeyQueryClient()
  const evm = config.evm
  const wagmiConfig = evm ? wagmiConfigFor(client, evm) : null
  if (!evm || !wagmiConfig)
    return <p className="pg-muted">The wagmi demo needs the local EVM node (`npm start` runs one).</p>
  return (
    <WagmiProvider config={wagmiConfig}>
      <QueryClientProvider client={queryClient}>
        <div className="pg-page-head">
          <h1>wagmi</h1>
          <p className="pg-muted">
            wagmi’s own hooks with the <code>latchkey/wagmi</code> connector, which follows your Latchkey
            session: no connect button.
          </p>
        </div>
        <ConnectionCard evm={evm} openSignIn={openSignIn} />
      </QueryClientProvider>
    </WagmiProvider>
  )
})

function ConnectionCard({ evm, openSignIn }: { evm: Evm; openSignIn: () => void }) {
  const connection = useConnection()
  const chain = useChains().find((c) => c.id === connection.chainId)
  return (
    <>
      <section className="pg-card" aria-labelledby="pg-wagmi-account-title">
        <h2 id="pg-wagmi-account-title">useConnection()</h2>
        <dl className="pg-result" style={{ margin: 0 }}>
          <dt>Status</dt>
          <dd data-testid="wagmi-status">{connection.status}</dd>
          <dt>Address</dt>
          <dd data-testid="wagmi-address">{connection.address ?? '—'}</dd>
          <dt>Chain</dt>
          <dd data-testid="wagmi-chain">
            {chain ? `${chain.name} (${chain.id})` : (connection.chainId ?? '—')}
          </dd>
          <dt>Connector</dt>
          <dd>{connection.connector?.name ?? '—'}</dd>
        </dl>
        {connection.status === 'disconnected' ? (
          <button type="button" className="pg-button pg-button-primary" onClick={openSignIn}>
            Sign in
          </button>
        ) : null}
      </section>
      {connection.address ? (
        <div className="pg-grid-2">
          <SendCard evm={evm} address={connection.address} />
          <SignCard address={connection.address} />
          <SponsoredBatchCard evm={evm} address={connection.address} />
        </div>
      ) : null}
    </>
  )
}

function SendCard({ evm, address }: { evm: Evm; address: `0x${string}` }) {
  const balance = useBalance({ address })
  const send = useSendTransaction()
  const receipt = useWaitForTransactionReceipt({ hash: send.data })
  const [funding, setFunding] = useState<string | null>(null)
  const [to, setTo] = useState<string>(BURN_ADDRESS)
  const [amount, setAmount] = useState('0.01')

  const fund = async () => {
    setFunding('Requesting 1 ETH from the faucet…')
    try {
      // The node's unlocked dev account pays (eth_sendTransaction on the node itself).
      const faucet = createWalletClient({ transport: http(evm.rpcUrl) })
      const hash = await faucet.sendTransaction({
        account: evm.faucetAccount as `0x${string}`,
        chain: null,
        to: address,
        value: parseEther('1'),
      })
      await waitForTransactionReceipt(faucet, { hash })
      await balance.refetch()
      setFunding(null)
    } catch (error) {
      setFunding((error as Error).message)
    }
  }

  return (
    <section className="pg-card" aria-labelledby="pg-wagmi-send-title">
      <h2 id="pg-wagmi-send-title">useSendTransaction()</h2>
      <div className="pg-row" style={{ marginBottom: 12 }}>
        <span className="pg-chip" data-testid="wagmi-balance">
          Balance: {balance.data ? `${formatEther(balance.data.value)} ETH` : '—'}
        </span>
        <button type="button" className="pg-button pg-button-small" onClick={() => void fund()}>
          Get 1 test ETH
        </button>
      </div>
      {funding ? <p className="pg-muted">{funding}</p> : null}
      <TransferFields to={to} onToChange={setTo} amount={amount} onAmountChange={setAmount} unit="ETH" />
      <button
        type="button"
        className="pg-button pg-button-primary"
        disabled={send.isPending || !isAddress(to) || !/^\d+(\.\d+)?$/.test(amount)}
        onClick={() =>
          send.mutate(
            { to: to as `0x${string}`, value: parseEther(amount) },
            { onSuccess: () => void balance.refetch() },
          )
        }
      >
        {send.isPending ? 'Sending…' : 'Send with wagmi'}
      </button>
      <div aria-live="polite">
        {send.error ? (
          <p className="pg-error" role="alert">
            {send.error.message}
          </p>
        ) : null}
        {send.data ? (
          <div className="pg-result">
            {receipt.data ? (
              <span
                className={`pg-badge ${receipt.data.status === 'success' ? 'pg-badge-ok' : 'pg-badge-bad'}`}
                data-testid="wagmi-receipt"
              >
                {receipt.data.status === 'success' ? '✓ Mined' : '✗ Reverted'} in block{' '}
                {receipt.data.blockNumber.toString()}
              </span>
            ) : (
              <span className="pg-muted">Waiting for the receipt…</span>
            )}
            <dl style={{ margin: 0 }}>
              <dt>Transaction hash</dt>
              <dd data-testid="wagmi-tx-hash">{send.data}</dd>
            </dl>
          </div>
        ) : null}
      </div>
    </section>
  )
}

function SignCard({ address }: { address: `0x${string}` }) {
  const sign = useSignMessage()
  const [message, setMessage] = useState('Hello from wagmi and Latchkey')
  const [verified, setVerified] = useState<boolean | null>(null)
  const messageId = useId()
  return (
    <section className="pg-card" aria-labelledby="pg-wagmi-sign-title">
      <h2 id="pg-wagmi-sign-title">useSignMessage()</h2>
      <label className="pg-field" htmlFor={messageId}>
        <span>Message</span>
        <textarea
          id={messageId}
          className="pg-textarea"
          value={message}
          onChange={(event) => {
            setMessage(event.target.value)
            setVerified(null)
            sign.reset()
          }}
        />
      </label>
      <button
        type="button"
        className="pg-button pg-button-primary"
        disabled={sign.isPending || message.length === 0}
        onClick={() =>
          sign.mutate(
            { message },
            {
              onSuccess: async (signature) =>
                setVerified(await verifyMessage({ address, message, signature }).catch(() => false)),
            },
          )
        }
      >
        {sign.isPending ? 'Signing…' : 'Sign with wagmi'}
      </button>
      <div aria-live="polite">
        {sign.error ? (
          <p className="pg-error" role="alert">
            {sign.error.message}
          </p>
        ) : null}
        {sign.data ? (
          <div className="pg-result">
            {verified ? (
              <span className="pg-badge pg-badge-ok" data-testid="wagmi-signature-verified">
                ✓ viem’s verifyMessage accepts it
              </span>
            ) : verified === false ? (
              <span className="pg-badge pg-badge-bad">✗ Signature does not verify</span>
            ) : null}
            <dl style={{ margin: 0 }}>
              <dt>Signature</dt>
              <dd data-testid="wagmi-signature">{sign.data}</dd>
            </dl>
          </div>
        ) : null}
      </div>
    </section>
  )
}
