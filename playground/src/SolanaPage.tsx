import {
  type Address,
  appendTransactionMessageInstruction,
  type Blockhash,
  createTransactionMessage,
  getAddressDecoder,
  getBase64EncodedWireTransaction,
  getPublicKeyFromAddress,
  getSignatureFromTransaction,
  isAddress,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  verifySignature,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { useCreateWallet, useLatchkey, useSession, useWalletAccounts } from 'latchkey'
import { createLatchkeySolanaSigner } from 'latchkey/solana'
import { useId, useState } from 'react'
import { TransferFields } from './TransferFields.tsx'

const LAMPORTS_PER_SOL = 1_000_000_000

/** 32 random bytes as base58: a fresh address, or a stand-in blockhash. */
const randomBase58 = () => getAddressDecoder().decode(crypto.getRandomValues(new Uint8Array(32)))

type Signed = {
  signature: string
  verified: boolean
  wireTransaction: string
  lamports: bigint
  from: string
  to: string
}

/**
 * A Solana transfer signed through `latchkey/solana`'s kit signer. No Solana node runs in the
 * local stack, so the transaction is built on a stand-in blockhash, signed, and verified here with
 * @solana/kit; it is shown, not sent.
 */
export function SolanaPage({ openSignIn }: { openSignIn: () => void }) {
  const session = useSession()
  if (!session)
    return (
      <section className="pg-card" aria-labelledby="pg-solana-title">
        <h1 id="pg-solana-title">Solana transfer</h1>
        <p className="pg-card-lead">Sign in to sign a Solana transfer with your Latchkey wallet.</p>
        <button type="button" className="pg-button pg-button-primary" onClick={openSignIn}>
          Sign in
        </button>
      </section>
    )
  return <SolanaTransfer />
}

function SolanaTransfer() {
  const client = useLatchkey()
  const accounts = useWalletAccounts()
  const createWallet = useCreateWallet()
  const solana = (accounts.data?.accounts ?? []).filter((a) => a.addressFormat === 'ADDRESS_FORMAT_SOLANA')
  const [picked, setPicked] = useState('')
  const address = solana.some((a) => a.address === picked) ? picked : (solana[0]?.address ?? '')
  const [to, setTo] = useState<string>(randomBase58)
  const [amount, setAmount] = useState('0.01')
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [signed, setSigned] = useState<Signed | null>(null)
  const accountId = useId()
  const amountValid = /^\d+(\.\d{1,9})?$/.test(amount) && Number(amount) > 0

  const sign = async () => {
    setPending(true)
    setError(null)
    setSigned(null)
    try {
      const signer = createLatchkeySolanaSigner(client, { address })
      const [whole = '0', fraction = ''] = amount.split('.')
      const value = BigInt(whole) * BigInt(LAMPORTS_PER_SOL) + BigInt(fraction.padEnd(9, '0'))
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(signer, m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: randomBase58() as string as Blockhash, lastValidBlockHeight: 0n },
            m,
          ),
        (m) =>
          appendTransactionMessageInstruction(
            getTransferSolInstruction({
              source: signer,
              destination: to as Address,
              amount: lamports(value),
            }),
            m,
          ),
      )
      const transaction = await signTransactionMessageWithSigners(message)
      const signatureBytes = transaction.signatures[signer.address]
      const verified =
        signatureBytes != null &&
        (await verifySignature(
          await getPublicKeyFromAddress(signer.address),
          signatureBytes,
          transaction.messageBytes,
        ))
      setSigned({
        signature: getSignatureFromTransaction(transaction),
        verified,
        wireTransaction: getBase64EncodedWireTransaction(transaction),
        lamports: value,
        from: signer.address,
        to,
      })
    } catch (caught) {
      setError((caught as Error).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <section className="pg-card" aria-labelledby="pg-solana-title">
      <h1 id="pg-solana-title">Solana transfer</h1>
      <p className="pg-card-lead">
        A system-program transfer built with @solana/kit and signed by <code>latchkey/solana</code>’s kit
        signer (one <code>sign_raw_payloads</code>, ed25519). No Solana node runs in the local stack: the
        transaction uses a stand-in blockhash and is verified here, not sent.
      </p>
      {accounts.isPending ? <p className="pg-muted">Loading accounts…</p> : null}
      {!accounts.isPending && solana.length === 0 ? (
        <div className="pg-row" style={{ marginBottom: 12 }}>
          <span className="pg-muted">You have no Solana account yet.</span>
          <button
            type="button"
            className="pg-button pg-button-small"
            disabled={createWallet.isPending}
            onClick={() => createWallet.mutate({ walletName: 'Solana', chains: ['solana'] })}
          >
            {createWallet.isPending ? 'Creating…' : 'Create a Solana wallet'}
          </button>
        </div>
      ) : null}
      {solana.length > 0 ? (
        <label className="pg-field" htmlFor={accountId}>
          <span>Solana account</span>
          <select
            id={accountId}
            className="pg-select pg-mono"
            value={address}
            onChange={(event) => setPicked(event.target.value)}
          >
            {solana.map((account) => (
              <option key={account.address} value={account.address}>
                {account.address}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <TransferFields to={to} onToChange={setTo} amount={amount} onAmountChange={setAmount} unit="SOL" />
      <button
        type="button"
        className="pg-button pg-button-primary"
        onClick={() => void sign()}
        disabled={!address || pending || !isAddress(to) || !amountValid}
      >
        {pending ? 'Signing…' : 'Sign transfer'}
      </button>
      <div aria-live="polite">
        {error ? (
          <p className="pg-error" role="alert">
            {error}
          </p>
        ) : null}
        {signed ? (
          <div className="pg-result">
            {signed.verified ? (
              <span className="pg-badge pg-badge-ok" data-testid="solana-verified">
                ✓ Signature verified with @solana/kit
              </span>
            ) : (
              <span className="pg-badge pg-badge-bad" data-testid="solana-invalid">
                ✗ Signature does not verify
              </span>
            )}
            <dl style={{ margin: 0 }}>
              <dt>Transfer</dt>
              <dd>
                {signed.lamports.toString()} lamports from <span className="pg-mono">{signed.from}</span> to{' '}
                <span className="pg-mono">{signed.to}</span>
              </dd>
              <dt>Transaction id (fee payer’s signature)</dt>
              <dd data-testid="solana-signature">{signed.signature}</dd>
              <dt>Signed wire transaction (base64)</dt>
              <dd data-testid="solana-wire-transaction" style={{ overflowWrap: 'anywhere' }}>
                {signed.wireTransaction}
              </dd>
            </dl>
          </div>
        ) : null}
      </div>
    </section>
  )
}
