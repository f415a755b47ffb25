import { LinkedLogins, SessionStatus, UserProfile, WalletList } from 'latchkey'
import { BackupPanel } from './BackupPanel.tsx'
import type { PlaygroundConfig } from './loadPlaygroundConfig.ts'
import { SendTransactionPanel } from './SendTransactionPanel.tsx'
import { SessionsPanel } from './SessionsPanel.tsx'
import { SignPanel } from './SignPanel.tsx'

/** The signed-in face of the demo app: every drop-in component plus the signing and sending demos. */
export function Dashboard({ config, openSignIn }: { config: PlaygroundConfig; openSignIn: () => void }) {
  return (
    <>
      <div className="pg-page-head">
        <h1>Your wallet</h1>
        <p className="pg-muted">
          Everything below is Latchkey’s drop-in components and hooks, live against the local service.
        </p>
      </div>
      <WalletList />
      <div className="pg-grid-2">
        <SignPanel chainId={config.evm?.chainId ?? 1} />
        {config.evm ? <SendTransactionPanel evm={config.evm} /> : null}
      </div>
      <div className="pg-grid-2">
        <BackupPanel />
        <div className="pg-main">
          {/* Signing out is the header's one button; sessions are listed once, beside this. */}
          <SessionStatus onSignIn={openSignIn} showSignOut={false} />
          <SessionsPanel onAddAccount={openSignIn} />
        </div>
      </div>
      <UserProfile showSessions={false} />
      <LinkedLogins />
    </>
  )
}
