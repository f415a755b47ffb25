import { useLatchkeyAccount } from 'latchkey/viem/react'
import { useCallback, useEffect, useMemo, useState } from 'react'
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  formatEther,
  http,
  parseEther,
  type TransactionReceipt,
} from 'viem'
import { EthereumAccountPicker, type PickedAccount } from './EthereumAccountPicker.tsx'
import { networkName } from './networkName.ts'
import { TransferFields } from './TransferFields.tsx'

/** The local EVM node as `npm start` and the e2e runner describe it. */
export interface EvmConfig {
  rpcUrl: string
  chainId: number
  caip2: string
  /** An unlocked, funded dev account of the node; the faucet sends from it. */
  faucetAccount: string
}

const BURN_ADDRESS = '0x000000000000000000000000000000000000dEaD'

type Stage =
  | { kind: 'idle' }
  | { kind: 'working'; label: string }
  | { kind: 'sent'; hash: string; receipt: TransactionReceipt }
  | { kind: 'error'; message: string }

/**
 * Sends ETH with viem: a wallet client whose account is the Latchkey account (`latchkey/viem`).
 * viem fills nonce, gas and fees from the node, the service signs the EIP-1559 transaction
 * (`sign_transaction`), and viem broadcasts it.
 */
export function SendTransactionPanel({ evm }: { evm: EvmConfig }) {
  const [picked, setPicked] = useState<PickedAccount | null>(null)
  const onAccount = useCallback((account: PickedAccount | null) => setPicked(account), [])
  const account = useLatchkeyAccount({ address: picked?.address as Address | undefined })
  const [balance, setBalance] = useState<bigint | null>(null)
  const [to, setTo] = useState(BURN_ADDRESS)
  const [amount, setAmount] = useState('0.01')
  const [stage, setStage] = useState<Stage>({ kind: 'idle' })

  const { chain, node } = useMemo(() => {
    const chain = defineChain({
      id: evm.chainId,
      name: networkName(evm.caip2),
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [evm.rpcUrl] } },
    })
    return { chain, node: createPublicClient({ chain, transport: http(), pollingInterval: 250 }) }
  }, [evm])

  const refreshBalance = useCallback(async () => {
    if (!picked) return setBalance(null)
    setBalance(await node.getBalance({ address: picked.address as Address }).catch(() => null))
  }, [picked, node])
  useEffect(() => {
    void refreshBalance()
  }, [refreshBalance])

  const run = async (label: string, work: () => Promise<void>) => {
    setStage({ kind: 'working', label })
    try {
      await work()
    } catch (error) {
      setStage({
        kind: 'error',
        message: (error as { shortMessage?: string }).shortMessage ?? (error as Error).message,
      })
    }
  }

  // The node's unlocked dev account pays (eth_sendTransaction on the node itself).
  const fund = () =>
    run('Requesting 1 ETH from the faucet…', async () => {
      if (!picked) return
      const faucet = createWalletClient({ account: evm.faucetAccount as Address, chain, transport: http() })
      const hash = await faucet.sendTransaction({ to: picked.address as Address, value: parseEther('1') })
      await node.waitForTransactionReceipt({ hash })
      await refreshBalance()
      setStage({ kind: 'idle' })
    })

  const send = () =>
    run('Signing and sending…', async () => {
      if (!account) return
      const wallet = createWalletClient({ account, chain, transport: http() })
      const hash = await wallet.sendTransaction({ to: to as Address, value: parseEther(amount) })
      const receipt = await node.waitForTransactionReceipt({ hash })
      setStage({ kind: 'sent', hash, receipt })
      await refreshBalance()
    })

  const working = stage.kind === 'working'
  return (
    <section className="pg-card" aria-labelledby="pg-send-title">
      <h2 id="pg-send-title">Send a transaction</h2>
      <p className="pg-card-lead">
        On <span data-testid="send-network">{networkName(evm.caip2)}</span>. New accounts start empty: use the
        faucet.
      </p>
      <EthereumAccountPicker onChange={onAccount} />
      <div className="pg-row" style={{ marginBottom: 12 }}>
        <span className="pg-chip" data-testid="balance">
          Balance: {balance === null ? '—' : `${formatEther(balance)} ETH`}
        </span>
        <button
          type="button"
          className="pg-button pg-button-small"
          onClick={fund}
          disabled={!picked || working}
        >
          Get 1 test ETH
        </button>
      </div>
      <TransferFields to={to} onToChange={setTo} amount={amount} onAmountChange={setAmount} unit="ETH" />
      <button
        type="button"
        className="pg-button pg-button-primary"
        onClick={send}
        disabled={!account || working || !/^0x[0-9a-fA-F]{40}$/.test(to) || !/^\d+(\.\d+)?$/.test(amount)}
      >
        Send
      </button>
      <div aria-live="polite">
        {stage.kind === 'working' ? <p className="pg-muted">{stage.label}</p> : null}
        {stage.kind === 'error' ? (
          <p className="pg-error" role="alert">
            {stage.message}
          </p>
        ) : null}
        {stage.kind === 'sent' ? (
          <div className="pg-result">
            <span
              className={`pg-badge ${stage.receipt.status === 'success' ? 'pg-badge-ok' : 'pg-badge-bad'}`}
            >
              {stage.receipt.status === 'success' ? '✓ Mined' : '✗ Reverted'} in block{' '}
              {stage.receipt.blockNumber.toString()}
            </span>
            <dl style={{ margin: 0 }}>
              <dt>Transaction hash</dt>
              <dd data-testid="tx-hash">{stage.hash}</dd>
              <dt>Gas used</dt>
              <dd>{stage.receipt.gasUsed.toString()}</dd>
              <dt>Type</dt>
              <dd data-testid="tx-type">{stage.receipt.type}</dd>
            </dl>
          </div>
        ) : null}
      </div>
    </section>
  )
}
