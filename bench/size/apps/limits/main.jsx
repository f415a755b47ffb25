// Issue 37: an account page with <SpendingLimits/> (the provider, the drop-in and the stylesheet),
// to measure the drop-in's own lazy chunk.
import 'latchkey/styles.css'
import { LatchkeyProvider, SpendingLimits } from 'latchkey'
import { createRoot } from 'react-dom/client'

const config = {
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
}

createRoot(document.getElementById('root')).render(
  <LatchkeyProvider config={config}>
    <SpendingLimits caip2="eip155:8453" />
  </LatchkeyProvider>,
)
