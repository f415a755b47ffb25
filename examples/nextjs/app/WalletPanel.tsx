'use client'
// The account, its wallet and a signature: hooks run only in client components.
import { useCreateWallet, useSession, useSignMessage, useWalletAccounts } from 'latchkey'

export function WalletPanel() {
  const session = useSession()
  if (!session) return <p>Sign in to get a wallet.</p>
  return <Wallet label={session.label ?? session.userId} />
}

function Wallet({ label }: { label: string }) {
  const accounts = useWalletAccounts()
  const createWallet = useCreateWallet()
  const signMessage = useSignMessage()
  if (accounts.isPending) return <p>Loading…</p>
  if (accounts.isError) return <p role="alert">{accounts.error.message}</p>
  const ethereum = accounts.data.accounts.find(
    (account) => account.addressFormat === 'ADDRESS_FORMAT_ETHEREUM',
  )
  return (
    <section aria-label="Wallet" style={{ display: 'grid', gap: '0.5rem' }}>
      <p>Signed in as {label}</p>
      {ethereum ? (
        <>
          <p>Ethereum account: {ethereum.address}</p>
          <button
            type="button"
            disabled={signMessage.isPending}
            onClick={() => signMessage.mutate({ signWith: ethereum.address, message: 'Hello from Next.js' })}
          >
            Sign “Hello from Next.js”
          </button>
          {signMessage.data ? <p>Signature: {signMessage.data.signature}</p> : null}
          {signMessage.isError ? <p role="alert">{signMessage.error.message}</p> : null}
        </>
      ) : (
        <button
          type="button"
          disabled={createWallet.isPending}
          onClick={() => createWallet.mutate({ walletName: 'Main', chains: ['ethereum'] })}
        >
          Create a wallet
        </button>
      )}
      {createWallet.isError ? <p role="alert">{createWallet.error.message}</p> : null}
    </section>
  )
}
