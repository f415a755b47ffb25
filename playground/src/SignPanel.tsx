import { useSignMessage, useSignTypedData } from 'latchkey'
import { useCallback, useId, useMemo, useState } from 'react'
import { EthereumAccountPicker, type PickedAccount } from './EthereumAccountPicker.tsx'
import {
  type AnySignature,
  exampleTypedData,
  toRsvHex,
  type Verification,
  verifyPersonalMessage,
  verifyTypedData,
} from './verifySignature.ts'

type Mode = 'message' | 'typed'

/**
 * Signs an EIP-191 message or EIP-712 typed data with the picked account, then verifies the
 * signature here, independently of Latchkey, by recovering the signer's address.
 */
export function SignPanel({ chainId }: { chainId: number }) {
  const [account, setAccount] = useState<PickedAccount | null>(null)
  const onAccount = useCallback((picked: PickedAccount | null) => setAccount(picked), [])
  const [mode, setMode] = useState<Mode>('message')
  const [message, setMessage] = useState('Hello from the Latchkey playground')
  const typedData = useMemo(
    () => exampleTypedData(chainId, account?.address ?? '0x0000000000000000000000000000000000000000'),
    [chainId, account],
  )
  const signMessage = useSignMessage()
  const signTypedData = useSignTypedData()
  const [result, setResult] = useState<{ signature: string; verification: Verification } | null>(null)
  const messageId = useId()
  const pending = signMessage.isPending || signTypedData.isPending
  const error = mode === 'message' ? signMessage.error : signTypedData.error

  const sign = async () => {
    if (!account) return
    setResult(null)
    if (mode === 'message') {
      const signature = (await signMessage.mutateAsync({
        signWith: account.address,
        message,
      })) as AnySignature
      setResult({
        signature: toRsvHex(signature),
        verification: verifyPersonalMessage(message, signature, account.address),
      })
    } else {
      const signature = (await signTypedData.mutateAsync({
        signWith: account.address,
        typedData,
      })) as AnySignature
      setResult({
        signature: toRsvHex(signature),
        verification: verifyTypedData(typedData, signature, account.address),
      })
    }
  }

  const tab = (value: Mode, label: string) => (
    <button
      type="button"
      role="tab"
      aria-selected={mode === value}
      onClick={() => {
        setMode(value)
        setResult(null)
      }}
    >
      {label}
    </button>
  )

  return (
    <section className="pg-card" aria-labelledby="pg-sign-title">
      <h2 id="pg-sign-title">Sign</h2>
      <p className="pg-card-lead">
        Sign with your Ethereum account, then check the signature without trusting anyone.
      </p>
      <EthereumAccountPicker onChange={onAccount} />
      <div className="pg-tabs" role="tablist" aria-label="What to sign">
        {tab('message', 'Message')}
        {tab('typed', 'Typed data (EIP-712)')}
      </div>
      {mode === 'message' ? (
        <label className="pg-field" htmlFor={messageId}>
          <span>Message</span>
          <textarea
            id={messageId}
            className="pg-textarea"
            value={message}
            onChange={(event) => {
              setMessage(event.target.value)
              setResult(null)
            }}
          />
        </label>
      ) : (
        <div className="pg-field">
          <span>Typed data</span>
          <pre className="pg-textarea" style={{ margin: 0, whiteSpace: 'pre-wrap' }}>
            {JSON.stringify({ domain: typedData.domain, message: typedData.message }, null, 2)}
          </pre>
        </div>
      )}
      <button
        type="button"
        className="pg-button pg-button-primary"
        onClick={() => void sign().catch(() => {})}
        disabled={!account || pending || (mode === 'message' && message.length === 0)}
      >
        {pending ? 'Signing…' : mode === 'message' ? 'Sign message' : 'Sign typed data'}
      </button>
      {error ? (
        <p className="pg-error" role="alert">
          {error.message}
        </p>
      ) : null}
      {result ? (
        <div className="pg-result" aria-live="polite">
          {result.verification.ok ? (
            <span className="pg-badge pg-badge-ok" data-testid="signature-verified">
              ✓ Signature verified
            </span>
          ) : (
            <span className="pg-badge pg-badge-bad" data-testid="signature-invalid">
              ✗ Signature does not match
            </span>
          )}
          <dl style={{ margin: 0 }}>
            <dt>Signature</dt>
            <dd data-testid="signature">{result.signature}</dd>
            <dt>Recovered signer</dt>
            <dd data-testid="recovered-signer">
              {result.verification.recovered ?? result.verification.error}
            </dd>
          </dl>
        </div>
      ) : null}
    </section>
  )
}
