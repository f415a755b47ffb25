// @turnkey/react-wallet-kit's provider as its README shows it, pointed at the local service.
import { TurnkeyProvider, useTurnkey } from '@turnkey/react-wallet-kit'
import '@turnkey/react-wallet-kit/styles.css'
import { useState } from 'react'
import { createRoot } from 'react-dom/client'

const params = new URLSearchParams(location.search)
const config = {
  apiBaseUrl: params.get('apiBaseUrl')!,
  authProxyUrl: params.get('authProxyUrl')!,
  authProxyConfigId: params.get('authProxyConfigId')!,
  organizationId: params.get('organizationId')!,
}

function Wallets() {
  const { clientState, authState, wallets, handleLogin, handleSignMessage, session } = useTurnkey()
  const [signature, setSignature] = useState('')
  const account = wallets
    .flatMap((w) => w.accounts)
    .find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
  return (
    <main>
      <p data-testid="client-state">{String(clientState)}</p>
      <p data-testid="auth-state">{String(authState)}</p>
      <p data-testid="session-user">{session?.userId ?? ''}</p>
      <ul data-testid="wallets">
        {wallets.map((wallet) => (
          <li key={wallet.walletId}>
            {wallet.walletName}: {wallet.accounts.map((a) => a.address).join(', ')}
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => handleLogin()}>
        Log in
      </button>
      {account ? (
        <button
          type="button"
          onClick={async () => {
            const result = await handleSignMessage({
              message: 'Hello from react-wallet-kit',
              walletAccount: account,
              addEthereumPrefix: true,
            })
            setSignature(`${result.r}${result.s}${result.v}`)
          }}
        >
          Sign message
        </button>
      ) : null}
      <p data-testid="signature">{signature}</p>
      <p data-testid="address">{account?.address ?? ''}</p>
    </main>
  )
}

createRoot(document.getElementById('root')!).render(
  <TurnkeyProvider config={config} callbacks={{ onError: (error) => console.error('turnkey', error) }}>
    <Wallets />
  </TurnkeyProvider>,
)
