// The minimal sign-in app: the provider, the drop-in modal (with its own "Sign in" trigger) and
// the stylesheet, as the README's quick start has it.
import 'latchkey/styles.css'
import { AuthModal, LatchkeyProvider } from 'latchkey'
import { createRoot } from 'react-dom/client'

const config = {
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
}

createRoot(document.getElementById('root')).render(
  <LatchkeyProvider config={config}>
    <AuthModal />
  </LatchkeyProvider>,
)
