// The anchor: the same minimal sign-in app (provider + login modal + styles) built with
// @turnkey/react-wallet-kit, following its README ("Provider" and "Quick authentication").
import '@turnkey/react-wallet-kit/styles.css'
import { TurnkeyProvider, useTurnkey } from '@turnkey/react-wallet-kit'
import { createRoot } from 'react-dom/client'

const config = {
  organizationId: '00000000-0000-4000-8000-000000000000',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
}

function LoginButton() {
  const { handleLogin } = useTurnkey()
  return (
    <button type="button" onClick={() => handleLogin()}>
      Log in / Sign up
    </button>
  )
}

createRoot(document.getElementById('root')).render(
  <TurnkeyProvider config={config}>
    <LoginButton />
  </TurnkeyProvider>,
)
