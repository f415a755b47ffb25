import {
  ExportWallet,
  SecuritySettings,
  SendTransaction,
  SpendingLimits,
  useSession,
  useWalletAccounts,
} from 'latchkey'
import { useState } from 'react'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  formatEther,
  http,
  parseEther,
} from 'viem'
import { networkName } from './networkName.ts'
import type { EvmConfig } from './SendTransactionPanel.tsx'

const BURN_ADDRESS = '0x000000000000000000000000000000000000dEaD'
const SEND_WEI = parseEther('0.2')

/**
 * Issue 38's demo: `<SecuritySettings/>` (an authenticator app with a QR code, recovery codes,
 * "exports need a second factor", "sends above 0.1 ETH need a passkey"), then the actions those
 * rules hold: exporting the wallet asks for the code, sending 0.2 ETH asks for a passkey. And
 * `<SpendingLimits/>` (issue 37): what the whole account may spend per day, week…, used and left.
 */
export function SecurityPage({ openSignIn, evm }: { openSignIn: () => void; evm: EvmConfig | null }) {
  const session = useSession()
  if (!session)
    return (
      <section className="pg-card" aria-labelledby="pg-security-title">
        <h1 id="pg-security-title">Security</h1>
        <p className="pg-card-lead">
          Sign in to add an authenticator app and decide which actions need a second factor.
        </p>
        <button type="button" className="pg-button pg-button-primary" onClick={openSignIn}>
          Sign in
        </button>
      </section>
    )
  return (
    <>
      <div className="pg-page-head">
        <h1>Security</h1>
        <p className="pg-muted">
          Add an authenticator app, turn a rule on, then try what it guards: the action waits for the second
          factor and finishes once it is proven.
        </p>
      </div>
      <SecuritySettings />
      {/* Issue 37: caps on the whole account; raising one waits for the second factor a rule asks. */}
      <SpendingLimits caip2={evm?.caip2 ?? 'eip155:1'} />
      <TryIt evm={evm} />
    </>
  )
}

type Stage = { kind: 'idle' } | { kind: 'working'; label: string } | { kind: 'error'; message: string }

function TryIt({ evm }: { evm: EvmConfig | null }) {
  const accounts = useWalletAccounts()
  const account = accounts.data?.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
  const [open, setOpen] = useState<'export' | 'send' | null>(null)
  const [stage, setStage] = useState<Stage>({ kind: 'idle' })
  const [balance, setBalance] = useState<bigint | null>(null)
  const [sent, setSent] = useState<string | null>(null)
  const close = (next: boolean) => {
    if (!next) setOpen(null)
  }

  const chain = evm
    ? defineChain({
        id: evm.chainId,
        name: networkName(evm.caip2),
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [evm.rpcUrl] } },
      })
    : null
  // The node's unlocked dev account pays (eth_sendTransaction on the node itself).
  const fund = async () => {
    if (!evm || !chain || !account) return
    setStage({ kind: 'working', label: 'Requesting 1 ETH from the faucet…' })
    try {
      const node = createPublicClient({ chain, transport: http(), pollingInterval: 250 })
      const faucet = createWalletClient({ account: evm.faucetAccount as Address, chain, transport: http() })
      const hash = await faucet.sendTransaction({ to: account.address as Address, value: parseEther('1') })
      await node.waitForTransactionReceipt({ hash })
      setBalance(await node.getBalance({ address: account.address as Address }))
      setStage({ kind: 'idle' })
    } catch (error) {
      setStage({ kind: 'error', message: (error as Error).message })
    }
  }

  return (
    <section className="pg-card" aria-labelledby="pg-try-title">
      <h2 id="pg-try-title">Try the rules</h2>
      {!account ? (
        <p className="pg-card-lead">Create a wallet on the App page first.</p>
      ) : (
        <>
          <p className="pg-card-lead">
            From <code>{account.address}</code>
            {balance !== null ? (
              <span data-testid="security-balance"> · {formatEther(balance)} ETH</span>
            ) : null}
          </p>
          <div className="pg-row">
            <button type="button" className="pg-button" onClick={() => setOpen('export')}>
              Export recovery phrase
            </button>
            {evm ? (
              <>
                <button
                  type="button"
                  className="pg-button"
                  onClick={() => void fund()}
                  disabled={stage.kind === 'working'}
                >
                  Get 1 test ETH
                </button>
                <button type="button" className="pg-button pg-button-primary" onClick={() => setOpen('send')}>
                  Send 0.2 ETH
                </button>
              </>
            ) : null}
          </div>
          <div aria-live="polite">
            {stage.kind === 'working' ? <p className="pg-muted">{stage.label}</p> : null}
            {stage.kind === 'error' ? (
              <p className="pg-error" role="alert">
                {stage.message}
              </p>
            ) : null}
            {sent ? (
              <p className="pg-muted" data-testid="security-sent">
                Sent: {sent}
              </p>
            ) : null}
          </div>
          <ExportWallet open={open === 'export'} onOpenChange={close} walletId={account.walletId} />
          {evm ? (
            <SendTransaction
              open={open === 'send'}
              onOpenChange={close}
              caip2={evm.caip2}
              from={account.address}
              calls={[{ to: BURN_ADDRESS, value: SEND_WEI }]}
              onSent={(result) => setSent(result.sendTransactionStatusId)}
            />
          ) : null}
        </>
      )}
    </section>
  )
}
