import { useEffect, useId, useState } from 'react'
import type { PlaygroundService } from './loadPlaygroundConfig.ts'
import {
  type ProxySettings,
  readProxySettings,
  SIGN_IN_METHOD_LABELS,
  writeProxySettings,
} from './proxySettings.ts'
import { WebhooksPanel } from './WebhooksPanel.tsx'

/**
 * The operator dashboard's authentication section (the seed's "operator dashboard"): the auth
 * proxy switch, allowed origins, message templates, session lifetime and sign-in methods, read
 * and written through the service's settings API with the dev root API key.
 */
export function OperatorPage({ service }: { service: PlaygroundService }) {
  const [saved, setSaved] = useState<ProxySettings | null>(null)
  const [draft, setDraft] = useState<ProxySettings | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [status, setStatus] = useState<
    { kind: 'idle' | 'saving' | 'saved' } | { kind: 'error'; message: string }
  >({
    kind: 'idle',
  })
  const ids = {
    origins: useId(),
    session: useId(),
    maxSession: useId(),
    subject: useId(),
    emailBody: useId(),
    smsBody: useId(),
  }

  useEffect(() => {
    readProxySettings(service).then(
      (settings) => {
        setSaved(settings)
        setDraft(settings)
      },
      (error: Error) => setLoadError(error.message),
    )
  }, [service])

  const update = (patch: Partial<ProxySettings>) => {
    setDraft((current) => (current ? { ...current, ...patch } : current))
    setStatus({ kind: 'idle' })
  }

  const save = async (event: React.FormEvent) => {
    event.preventDefault()
    if (!draft) return
    setStatus({ kind: 'saving' })
    try {
      const settings = await writeProxySettings(service, draft)
      setSaved(settings)
      setDraft(settings)
      setStatus({ kind: 'saved' })
    } catch (error) {
      setStatus({ kind: 'error', message: (error as Error).message })
    }
  }

  return (
    <>
      <section className="pg-card" aria-labelledby="pg-operator-title">
        <h1 id="pg-operator-title" style={{ margin: 0, fontSize: 22, letterSpacing: '-0.02em' }}>
          Operator dashboard · Authentication
        </h1>
        <p className="pg-card-lead" style={{ marginTop: 6 }}>
          How this app’s users sign in. Changes apply to the next request the auth proxy handles.
        </p>
        <p className="pg-note" style={{ margin: 0 }}>
          Dev tool: this page signs its requests with the local service’s <strong>root API key</strong> (
          <code>{service.apiPublicKey.slice(0, 12)}…</code>), the dev credential the service prints on start.
          A real app never ships it to a browser.
        </p>
      </section>
      {loadError ? (
        <p className="pg-error" role="alert">
          Couldn’t read the settings: {loadError}
        </p>
      ) : null}
      {draft ? (
        <form className="pg-main" onSubmit={save} aria-label="Authentication settings">
          <section className="pg-card" aria-labelledby="pg-proxy-title">
            <h2 id="pg-proxy-title">Auth proxy</h2>
            <p className="pg-card-lead">
              The proxy lets the front end sign people up and in without an API key of its own.
            </p>
            <label className="pg-switch">
              <input
                type="checkbox"
                checked={draft.enabled}
                onChange={(e) => update({ enabled: e.target.checked })}
              />
              Auth proxy enabled
            </label>
            {saved?.authProxyConfigId ? (
              <p className="pg-muted" style={{ marginBottom: 0 }}>
                Config id <code>{saved.authProxyConfigId}</code>
              </p>
            ) : null}
          </section>

          <section className="pg-card" aria-labelledby="pg-methods-title">
            <h2 id="pg-methods-title">Sign-in methods</h2>
            <p className="pg-card-lead">The sign-in modal offers exactly these.</p>
            <fieldset className="pg-methods">
              <legend className="pg-muted" style={{ marginBottom: 8 }}>
                Enabled methods
              </legend>
              {Object.entries(SIGN_IN_METHOD_LABELS).map(([method, label]) => (
                <label key={method}>
                  <input
                    type="checkbox"
                    checked={draft.enabledProviders.includes(
                      method as ProxySettings['enabledProviders'][number],
                    )}
                    onChange={(e) =>
                      update({
                        enabledProviders: e.target.checked
                          ? [...draft.enabledProviders, method as ProxySettings['enabledProviders'][number]]
                          : draft.enabledProviders.filter((m) => m !== method),
                      })
                    }
                  />
                  {label}
                </label>
              ))}
            </fieldset>
            <label className="pg-field" htmlFor={ids.session}>
              <span>Session expiration (seconds)</span>
              <input
                id={ids.session}
                className="pg-input"
                inputMode="numeric"
                value={draft.sessionExpirationSeconds}
                onChange={(e) => update({ sessionExpirationSeconds: e.target.value.trim() })}
              />
              <small>How long a session lasts after sign-in. 900 is 15 minutes.</small>
            </label>
            <label className="pg-field" htmlFor={ids.maxSession}>
              <span>Longest session (seconds)</span>
              <input
                id={ids.maxSession}
                className="pg-input"
                inputMode="numeric"
                placeholder="2592000"
                value={draft.maxSessionExpirationSeconds ?? ''}
                onChange={(e) => update({ maxSessionExpirationSeconds: e.target.value.trim() })}
              />
              <small>
                No sign-in gets a longer session, whatever the app asks for. At most 2592000 (30 days), the
                longest there is.
              </small>
            </label>
          </section>

          <section className="pg-card" aria-labelledby="pg-origins-title">
            <h2 id="pg-origins-title">Allowed origins</h2>
            <label className="pg-field" htmlFor={ids.origins}>
              <span>One origin per line</span>
              <textarea
                id={ids.origins}
                className="pg-textarea"
                value={draft.allowedOrigins.join('\n')}
                onChange={(e) =>
                  update({
                    allowedOrigins: e.target.value
                      .split('\n')
                      .map((line) => line.trim())
                      .filter(Boolean),
                  })
                }
              />
              <small>
                <code>*</code> allows every origin. This page runs on <code>{window.location.origin}</code>.
              </small>
            </label>
          </section>

          <section className="pg-card" aria-labelledby="pg-templates-title">
            <h2 id="pg-templates-title">Message templates</h2>
            <p className="pg-card-lead">
              <code>{'{{code}}'}</code> becomes the one-time code, <code>{'{{appName}}'}</code> the app’s name
              and <code>{'{{expiresInMinutes}}'}</code> the code’s lifetime.
            </p>
            <label className="pg-field" htmlFor={ids.subject}>
              <span>E-mail subject</span>
              <input
                id={ids.subject}
                className="pg-input"
                value={draft.emailTemplate.subject}
                onChange={(e) =>
                  update({ emailTemplate: { ...draft.emailTemplate, subject: e.target.value } })
                }
              />
            </label>
            <label className="pg-field" htmlFor={ids.emailBody}>
              <span>E-mail body</span>
              <textarea
                id={ids.emailBody}
                className="pg-textarea"
                value={draft.emailTemplate.body}
                onChange={(e) => update({ emailTemplate: { ...draft.emailTemplate, body: e.target.value } })}
              />
            </label>
            <label className="pg-field" htmlFor={ids.smsBody}>
              <span>SMS body</span>
              <textarea
                id={ids.smsBody}
                className="pg-textarea"
                value={draft.smsTemplate.body}
                onChange={(e) => update({ smsTemplate: { body: e.target.value } })}
              />
            </label>
          </section>

          <div className="pg-row pg-savebar">
            <button type="submit" className="pg-button pg-button-primary" disabled={status.kind === 'saving'}>
              {status.kind === 'saving' ? 'Saving…' : 'Save settings'}
            </button>
            <button
              type="button"
              className="pg-button"
              onClick={() => {
                setDraft(saved)
                setStatus({ kind: 'idle' })
              }}
            >
              Discard changes
            </button>
            <span aria-live="polite">
              {status.kind === 'saved' ? <span className="pg-badge pg-badge-ok">Saved</span> : null}
            </span>
          </div>
          {status.kind === 'error' ? (
            <p className="pg-error" role="alert">
              {status.message}
            </p>
          ) : null}
        </form>
      ) : loadError ? null : (
        <p className="pg-muted">Loading settings…</p>
      )}
      <WebhooksPanel service={service} />
    </>
  )
}
