// Issue 38: an account page with <SecuritySettings/> (the provider, the drop-in and the stylesheet),
// to measure the drop-in's own lazy chunks: its panel, and the authenticator-app enrolment with the
// QR encoder.
import 'latchkey/styles.css'
import { LatchkeyProvider, SecuritySettings } from 'latchkey'
import { createRoot } from 'react-dom/client'

const config = {
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
}

createRoot(document.getElementById('root')).render(
  <LatchkeyProvider config={config}>
    <SecuritySettings />
  </LatchkeyProvider>,
)
