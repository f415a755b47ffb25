// A Server Component too: <AuthModal/> comes through the client boundary; the hooks live in the
// client component below.
import { AuthModal } from 'latchkey'
import { WalletPanel } from './WalletPanel'

export default function Home() {
  return (
    <main style={{ display: 'grid', gap: '1rem', maxWidth: 640 }}>
      <h1>Latchkey on Next.js</h1>
      <AuthModal />
      <WalletPanel />
    </main>
  )
}
