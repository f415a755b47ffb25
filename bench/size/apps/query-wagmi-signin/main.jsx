// The react-query + wagmi app with Latchkey's sign-in: the provider (given the app's QueryClient,
// as the README says), the drop-in modal and the stylesheet. Its start-up minus the app's is
// what Latchkey adds to an app that already has react-query and wagmi.
import 'latchkey/styles.css'
import { AuthModal, LatchkeyProvider } from 'latchkey'
import { createRoot } from 'react-dom/client'
import { App, queryClient } from '../query-wagmi/App.jsx'

const config = {
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
}

createRoot(document.getElementById('root')).render(
  <App>
    <LatchkeyProvider config={config} queryClient={queryClient}>
      <AuthModal />
    </LatchkeyProvider>
  </App>,
)
