import {
  AuthModal,
  LatchkeyProvider,
  LatchkeyUIProvider,
  SessionStatus,
  useLogout,
  useSession,
  useSessionStatus,
} from 'latchkey'
import { lazy, Suspense, useCallback, useMemo, useState } from 'react'
import { Dashboard } from './Dashboard.tsx'
import { DelegatedAccessLink } from './DelegatedAccessLink.tsx'
import { DevInbox } from './DevInbox.tsx'
import type { PlaygroundConfig } from './loadPlaygroundConfig.ts'
import { networkName } from './networkName.ts'
import { OperatorPage } from './OperatorPage.tsx'
import { type Route, useRoute } from './useRoute.ts'

// The adapter demos load on demand: the landing page never pays for wagmi, viem or @solana/kit.
const WagmiPage = lazy(() => import('./WagmiPage.tsx').then((m) => ({ default: m.WagmiPage })))
const SolanaPage = lazy(() => import('./SolanaPage.tsx').then((m) => ({ default: m.SolanaPage })))
const AgentPage = lazy(() => import('./AgentPage.tsx').then((m) => ({ default: m.AgentPage })))
const DelegatedAccessPage = lazy(() =>
  import('./DelegatedAccessPage.tsx').then((m) => ({ default: m.DelegatedAccessPage })),
)
const SecurityPage = lazy(() => import('./SecurityPage.tsx').then((m) => ({ default: m.SecurityPage })))

export function App({ config }: { config: PlaygroundConfig }) {
  const { service } = config
  // `?locale=es` (or `ar`): every drop-in in another built-in language (the playground's own
  // words stay English).
  const locale = new URLSearchParams(window.location.search).get('locale') ?? undefined
  const latchkeyConfig = useMemo(
    () => ({
      authProxyUrl: service.authProxyUrl,
      baseUrl: service.baseUrl,
      authProxyConfigId: service.authProxyConfigId,
      organizationId: service.organizationId,
      trustedSignerPublicKey: service.trustedSignerPublicKey,
      ...(service.client?.session ? { session: service.client.session } : {}),
    }),
    [service],
  )
  const [route, navigate] = useRoute()
  // One sign-in dialog for the whole app: it stays mounted when the landing page gives way to
  // the dashboard, so new users still see its success step and the passkey offer.
  const [signingIn, setSigningIn] = useState(false)
  // Stable, so the memoized pages (the wagmi one) do not re-render when the dialog opens or closes.
  const openSignIn = useCallback(() => setSigningIn(true), [])
  // The modal gives focus back to the button that opened it; a sign-in replaces the header's
  // "Sign in" with the session, so focus would be left on <body>: the page's content takes it.
  const closeSignIn = useCallback((open: boolean) => {
    setSigningIn(open)
    if (!open)
      requestAnimationFrame(() => {
        if (document.activeElement === document.body) document.getElementById('main')?.focus()
      })
  }, [])
  return (
    <LatchkeyProvider config={latchkeyConfig}>
      <LatchkeyUIProvider locale={locale}>
        <a className="pg-skip" href="#main">
          Skip to content
        </a>
        <Header route={route} navigate={navigate} config={config} openSignIn={openSignIn} />
        <div className="pg-layout">
          <main id="main" className="pg-main" tabIndex={-1}>
            {route === '/operator' ? (
              <OperatorPage service={service} />
            ) : route === '/agent' ? (
              <Suspense fallback={<p className="pg-muted">Loading…</p>}>
                <AgentPage openSignIn={openSignIn} evm={config.evm} navigate={navigate} />
              </Suspense>
            ) : route === '/delegated' ? (
              <Suspense fallback={<p className="pg-muted">Loading…</p>}>
                <DelegatedAccessPage openSignIn={openSignIn} chainId={config.evm?.chainId ?? 1} />
              </Suspense>
            ) : route === '/security' ? (
              <Suspense fallback={<p className="pg-muted">Loading…</p>}>
                <SecurityPage openSignIn={openSignIn} evm={config.evm} />
              </Suspense>
            ) : route === '/wagmi' || route === '/solana' ? (
              <Suspense fallback={<p className="pg-muted">Loading…</p>}>
                {route === '/wagmi' ? (
                  <WagmiPage config={config} openSignIn={openSignIn} />
                ) : (
                  <SolanaPage openSignIn={openSignIn} />
                )}
              </Suspense>
            ) : (
              <AppUserPage config={config} openSignIn={openSignIn} />
            )}
          </main>
          <aside className="pg-aside" aria-label="Developer tools">
            <DevInbox service={service} />
            <StackInfo config={config} />
            <DelegatedAccessLink navigate={navigate} />
          </aside>
        </div>
        <AuthModal open={signingIn} onOpenChange={closeSignIn} />
      </LatchkeyUIProvider>
    </LatchkeyProvider>
  )
}

function Header({
  route,
  navigate,
  config,
  openSignIn,
}: {
  route: Route
  navigate: (to: Route) => void
  config: PlaygroundConfig
  openSignIn: () => void
}) {
  const link = (to: Route, label: string) => (
    <a
      href={to}
      aria-current={route === to ? 'page' : undefined}
      onClick={(event) => {
        event.preventDefault()
        navigate(to)
      }}
    >
      {label}
    </a>
  )
  return (
    <header className="pg-header">
      <a
        className="pg-brand"
        href="/"
        onClick={(event) => {
          event.preventDefault()
          navigate('/')
        }}
      >
        <Logo />
        <span>
          Latchkey <small>playground</small>
        </span>
      </a>
      <nav className="pg-nav" aria-label="Playground">
        {link('/', 'App')}
        {link('/wagmi', 'wagmi')}
        {link('/solana', 'Solana')}
        {link('/agent', 'Agent')}
        {link('/operator', 'Operator')}
        {link('/security', 'Security')}
      </nav>
      <div className="pg-header-end">
        {config.serviceName !== 'default' ? (
          <span className="pg-chip">service: {config.serviceName}</span>
        ) : null}
        <HeaderSession openSignIn={openSignIn} />
      </div>
    </header>
  )
}

function HeaderSession({ openSignIn }: { openSignIn: () => void }) {
  const session = useSession()
  const status = useSessionStatus()
  const logout = useLogout()
  if (!session && status === 'expired')
    return (
      <>
        <span className="pg-chip" data-tone="danger">
          <span className="pg-dot" aria-hidden="true" />
          <span className="pg-chip-text">Session expired</span>
        </span>
        <button
          type="button"
          className="pg-button pg-button-small"
          onClick={openSignIn}
          aria-haspopup="dialog"
        >
          Sign in again
        </button>
      </>
    )
  if (!session) return null
  return (
    <>
      <span className="pg-chip" title={session.userId}>
        <span className="pg-dot" aria-hidden="true" />
        <span className="pg-chip-text">{session.label ?? 'Signed in'}</span>
      </span>
      <button
        type="button"
        className="pg-button pg-button-small"
        onClick={() => logout.mutate()}
        disabled={logout.isPending}
      >
        {logout.isPending ? 'Signing out…' : 'Sign out'}
      </button>
    </>
  )
}

function AppUserPage({ config, openSignIn }: { config: PlaygroundConfig; openSignIn: () => void }) {
  const session = useSession()
  const status = useSessionStatus()
  if (session) return <Dashboard config={config} openSignIn={openSignIn} />
  // An expired session shows no wallets (they would wait on it forever): it says so and signs in again.
  if (status === 'expired') return <SessionEnded openSignIn={openSignIn} />
  return <Landing openSignIn={openSignIn} />
}

function SessionEnded({ openSignIn }: { openSignIn: () => void }) {
  return (
    <>
      <div className="pg-page-head">
        <h1>Your wallet</h1>
        <p className="pg-muted">Your session ended. Sign in again to see your wallets; nothing was lost.</p>
      </div>
      <SessionStatus onSignIn={openSignIn} />
    </>
  )
}

function Landing({ openSignIn }: { openSignIn: () => void }) {
  return (
    <>
      <section className="pg-hero" aria-labelledby="pg-hero-title">
        <span className="pg-chip" style={{ width: 'fit-content' }}>
          <span className="pg-dot" aria-hidden="true" /> Local service running
        </span>
        <h1 id="pg-hero-title">A wallet in your app, in one modal.</h1>
        <p>
          This demo app uses Latchkey’s public components against a local key-management service. Sign in with
          e-mail, SMS, a passkey, a social account or a browser wallet, then create wallets, sign and send.
        </p>
        <div className="pg-hero-actions">
          <button
            type="button"
            className="pg-button pg-button-primary pg-button-large"
            onClick={openSignIn}
            aria-haspopup="dialog"
          >
            Sign in
          </button>
          <span className="pg-muted">New here? Signing in creates your account.</span>
        </div>
      </section>
      <section className="pg-features" aria-label="What you can try">
        <div className="pg-card pg-feature">
          <h2 style={{ fontSize: 15, margin: '0 0 4px' }}>Keys stay put</h2>
          <p>Your session key is a non-extractable WebCrypto key; wallets live in the service.</p>
        </div>
        <div className="pg-card pg-feature">
          <h2 style={{ fontSize: 15, margin: '0 0 4px' }}>Sign and verify</h2>
          <p>Sign messages and typed data, and watch the signature verify right here.</p>
        </div>
        <div className="pg-card pg-feature">
          <h2 style={{ fontSize: 15, margin: '0 0 4px' }}>Real transactions</h2>
          <p>Fund an address from the faucet and send ETH on the local chain.</p>
        </div>
      </section>
    </>
  )
}

function StackInfo({ config }: { config: PlaygroundConfig }) {
  return (
    <section className="pg-card" aria-labelledby="pg-stack-title">
      <h2 id="pg-stack-title">Local stack</h2>
      <dl className="pg-result" style={{ marginTop: 10 }}>
        <dt>Activity API</dt>
        <dd>{config.service.baseUrl}</dd>
        <dt>Auth proxy</dt>
        <dd>{config.service.authProxyUrl}</dd>
        <dt>Organization</dt>
        <dd>{config.service.organizationId}</dd>
        {config.evm ? (
          <>
            <dt>EVM node</dt>
            <dd>
              <span data-testid="stack-network">{networkName(config.evm.caip2)}</span>, chain{' '}
              {config.evm.chainId}
              <br />
              {config.evm.rpcUrl}
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  )
}

function Logo() {
  return (
    <svg width="26" height="26" viewBox="0 0 32 32" aria-hidden="true">
      <rect width="32" height="32" rx="8" fill="var(--pg-accent)" />
      <path d="M11 14v-3a5 5 0 0 1 10 0v3" stroke="var(--pg-accent-fg)" strokeWidth="2.5" fill="none" />
      <rect x="8" y="14" width="16" height="11" rx="2.5" fill="var(--pg-accent-fg)" />
    </svg>
  )
}
