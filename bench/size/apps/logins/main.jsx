// Issue 38: an account page with <LinkedLogins/> (the provider, the drop-in and the stylesheet), to
// measure what linking loads only when asked: the e-mail form, and the OAuth flow behind "Link Google".
import 'latchkey/styles.css'
import { LatchkeyProvider, LinkedLogins } from 'latchkey'
import { createRoot } from 'react-dom/client'

const config = {
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
}

createRoot(document.getElementById('root')).render(
  <LatchkeyProvider config={config}>
    <LinkedLogins />
  </LatchkeyProvider>,
)
