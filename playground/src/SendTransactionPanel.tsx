import { useSendRawTransaction, useSignRawPayloads } from 'latchkey'
import { useCallback, useEffect, useId, useState } from 'react'
import { EthereumAccountPicker, type PickedAccount } from './EthereumAccountPicker.tsx'
import {
  attachSignature,
  type EvmConfig,
  faucet,
  formatEther,
  getBalance,
  prepareTransfer,
  type TransactionReceipt,
  waitForReceipt,
} from './evm.ts'

const BURN_ADDRESS = '0x000000000000000000000000000000000000dEaD'

type Stage =
  | { kind: 'idle' }
  | { kind: 'working'; label: string }
  | { kind: 'sent'; hash: string; receipt: TransactionReceipt }
  | { kind: 'error'; message: string }

/**
 * Builds an EIP-1559 transfer, has Latchkey sign its hash (`sign_raw_payloads`, no-op hash), and
 * sends it with `eth_send_raw_transaction`; the service broadcasts it to the local node.
 */
export function SendTransactionPanel({ evm }: { evm: EvmConfig }) {
  const [account, setAccount] = useState<PickedAccount | null>(null)
  const onAccount = useCallback((picked: PickedAccount | null) => setAccount(picked), [])
  const [balance, setBalance] = useState<bigint | null>(null)
  const [to, setTo] = useState(BURN_ADDRESS)
  const [amount, setAmount] = useState('0.01')
  const [stage, setStage] = useState<Stage>({ kind: 'idle' })
  const signRawPayloads = useSignRawPayloads()
  const sendRawTransaction = useSendRawTransaction()
  const toId = useId()
  const amountId = useId()

  const refreshBalance = useCallback(async () => {
    if (!account) return setBalance(null)
    setBalance(await getBalance(evm, account.address).catch(() => null))
  }, [account, evm])
  useEffect(() => {
    void refreshBalance()
  }, [refreshBalance])

  const run = async (label: string, work: () => Promise<void>) => {
    setStage({ kind: 'working', label })
    try {
      await work()
    } catch (error) {
      setStage({ kind: 'error', message: (error as Error).message })
    }
  }

  const fund = () =>
    run('Requesting 1 ETH from the faucet…', async () => {
      if (!account) return
      const hash = await faucet(evm, account.address, '1')
      await waitForReceipt(evm, hash)
      await refreshBalance()
      setStage({ kind: 'idle' })
    })

  const send = () =>
    run('Signing and sending…', async () => {
      if (!account) return
      const unsigned = await prepareTransfer(evm, account.address, to, amount)
      const signed = await signRawPayloads.mutateAsync({
        signWith: account.address,
        payloads: [unsigned.signingHash],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      })
      const signature = signed.signatures?.[0]
      if (!signature) throw new Error('The service returned no signature.')
      const transaction = attachSignature(unsigned.transaction, signature)
      const sent = await sendRawTransaction.mutateAsync({
        signedTransaction: transaction.toHex(),
        caip2: evm.caip2,
      })
      const receipt = await waitForReceipt(evm, sent.transactionHash)
      setStage({ kind: 'sent', hash: sent.transactionHash, receipt })
      await refreshBalance()
    })

  const working = stage.kind === 'working'
  return (
    <section className="pg-card" aria-labelledby="pg-send-title">
      <h2 id="pg-send-title">Send a transaction</h2>
      <p className="pg-card-lead">
        On the local chain ({evm.caip2}). New accounts start empty: use the faucet.
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
          disabled={!account || working}
        >
          Get 1 test ETH
        </button>
      </div>
      <label className="pg-field" htmlFor={toId}>
        <span>Recipient</span>
        <input
          id={toId}
          className="pg-input pg-mono"
          value={to}
          onChange={(e) => setTo(e.target.value.trim())}
        />
      </label>
      <label className="pg-field" htmlFor={amountId}>
        <span>Amount (ETH)</span>
        <input
          id={amountId}
          className="pg-input"
          inputMode="decimal"
          value={amount}
          onChange={(e) => setAmount(e.target.value.trim())}
        />
      </label>
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
            <span className={`pg-badge ${stage.receipt.status === '0x1' ? 'pg-badge-ok' : 'pg-badge-bad'}`}>
              {stage.receipt.status === '0x1' ? '✓ Mined' : '✗ Reverted'} in block{' '}
              {BigInt(stage.receipt.blockNumber)}
            </span>
            <dl style={{ margin: 0 }}>
              <dt>Transaction hash</dt>
              <dd data-testid="tx-hash">{stage.hash}</dd>
              <dt>Gas used</dt>
              <dd>{BigInt(stage.receipt.gasUsed).toString()}</dd>
            </dl>
          </div>
        ) : null}
      </div>
    </section>
  )
}
