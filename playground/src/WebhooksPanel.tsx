import { WEBHOOK_EVENT_TYPES, type WebhookDelivery, type WebhookEndpoint } from '@latchkey/protocol'
import { useLatchkey } from 'latchkey'
import { type Latchkey, query, submit } from 'latchkey/core'
import { useCallback, useEffect, useId, useState } from 'react'
import type { PlaygroundService } from './loadPlaygroundConfig.ts'
import { devStamper } from './proxySettings.ts'

/** How many deliveries the list shows (newest first). */
const RECENT = 20

/** The request as a receiver got it: request line, headers, a blank line and the raw body. */
export function signedRequestText(delivery: WebhookDelivery): string {
  const { request } = delivery
  if (!request) return ''
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`)
  return [`${request.method} ${request.url}`, ...headers, '', delivery.body].join('\n')
}

/** Activities and queries signed with the dev root key, in the parent organization. */
function operatorCalls(client: Latchkey, service: PlaygroundService) {
  const options = async () => ({ stamper: await devStamper(service), organizationId: service.organizationId })
  return {
    list: async () =>
      (
        await query(
          client,
          'list_webhook_endpoints',
          { organizationId: service.organizationId },
          await options(),
        )
      ).webhookEndpoints,
    deliveries: async () =>
      (
        await query(
          client,
          'latchkey_list_webhook_deliveries',
          { organizationId: service.organizationId, paginationOptions: { limit: String(RECENT) } },
          await options(),
        )
      ).webhookDeliveries,
    create: async (url: string, name: string) =>
      submit(
        client,
        'create_webhook_endpoint',
        { url, name, subscriptions: WEBHOOK_EVENT_TYPES.map((eventType) => ({ eventType, isActive: true })) },
        await options(),
      ),
    setActive: async (endpointId: string, isActive: boolean) =>
      submit(client, 'update_webhook_endpoint', { endpointId, isActive }, await options()),
    remove: async (endpointId: string) =>
      submit(client, 'delete_webhook_endpoint', { endpointId }, await options()),
    redeliver: async (eventId: string, endpointId: string) =>
      submit(client, 'latchkey_redeliver_webhook_event', { eventId, endpointId }, await options()),
  }
}

const when = (ms: string) => new Date(Number(ms)).toLocaleTimeString()

/**
 * The operator page's webhooks section: the parent organization's endpoints (created on every
 * event, paused, resumed, deleted through the activity API with the dev root key) and their recent
 * deliveries, each with the exact signed request last sent and a Redeliver button.
 */
export function WebhooksPanel({ service }: { service: PlaygroundService }) {
  const client = useLatchkey()
  const [calls] = useState(() => operatorCalls(client, service))
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[] | null>(null)
  const [deliveries, setDeliveries] = useState<WebhookDelivery[]>([])
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [url, setUrl] = useState('')
  const [name, setName] = useState('')
  const ids = { url: useId(), name: useId() }

  const refresh = useCallback(async () => {
    try {
      const [listed, recent] = await Promise.all([calls.list(), calls.deliveries()])
      setEndpoints(listed)
      setDeliveries(recent)
      setError(null)
    } catch (caught) {
      setError((caught as Error).message)
    }
  }, [calls])

  useEffect(() => {
    void refresh()
  }, [refresh])

  const act = async (work: () => Promise<unknown>) => {
    setBusy(true)
    try {
      await work()
      await refresh()
    } catch (caught) {
      setError((caught as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const create = (event: React.FormEvent) => {
    event.preventDefault()
    void act(async () => {
      await calls.create(url.trim(), name.trim() || 'playground')
      setUrl('')
      setName('')
    })
  }

  return (
    <section className="pg-card pg-webhooks" aria-labelledby="pg-webhooks-title">
      <h2 id="pg-webhooks-title">Webhooks</h2>
      <p className="pg-card-lead">
        Signed events to your back end. A new endpoint here subscribes to every event; each delivery shows the
        request exactly as signed, which the verifier of <code>@latchkey/protocol</code> accepts.
      </p>
      <form className="pg-webhooks-form" onSubmit={create} aria-label="New webhook endpoint">
        <label className="pg-field" htmlFor={ids.url}>
          <span>Receiver URL</span>
          <input
            id={ids.url}
            className="pg-input"
            type="url"
            required
            placeholder="https://app.example.com/webhooks"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
        </label>
        <label className="pg-field" htmlFor={ids.name}>
          <span>Name</span>
          <input id={ids.name} className="pg-input" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <div className="pg-row">
          <button type="submit" className="pg-button pg-button-primary" disabled={busy}>
            Add endpoint
          </button>
          <button
            type="button"
            className="pg-button"
            onClick={() => void act(async () => undefined)}
            disabled={busy}
          >
            Refresh
          </button>
        </div>
      </form>
      {error ? (
        <p className="pg-error" role="alert">
          {error}
        </p>
      ) : null}
      <h3>Endpoints</h3>
      {endpoints === null ? (
        <p className="pg-muted">Loading endpoints…</p>
      ) : endpoints.length === 0 ? (
        <p className="pg-muted">No endpoint yet.</p>
      ) : (
        <ul className="pg-webhooks-list" aria-label="Webhook endpoints">
          {endpoints.map((endpoint) => {
            const paused = endpoint.pausedAtMs !== undefined || !endpoint.isActive
            return (
              <li key={endpoint.endpointId} className="pg-webhooks-item">
                <div>
                  <strong>{endpoint.name}</strong>{' '}
                  <span className={`pg-badge ${paused ? 'pg-badge-bad' : 'pg-badge-ok'}`}>
                    {endpoint.pausedAtMs ? 'Paused after failures' : endpoint.isActive ? 'Active' : 'Paused'}
                  </span>
                </div>
                <code className="pg-webhooks-url">{endpoint.url}</code>
                <div className="pg-row">
                  <button
                    type="button"
                    className="pg-button"
                    disabled={busy}
                    aria-label={`${paused ? 'Resume' : 'Pause'} ${endpoint.name}`}
                    onClick={() => void act(() => calls.setActive(endpoint.endpointId, paused))}
                  >
                    {paused ? 'Resume' : 'Pause'}
                  </button>
                  <button
                    type="button"
                    className="pg-button"
                    disabled={busy}
                    aria-label={`Delete ${endpoint.name}`}
                    onClick={() => void act(() => calls.remove(endpoint.endpointId))}
                  >
                    Delete
                  </button>
                </div>
              </li>
            )
          })}
        </ul>
      )}
      <h3>Recent deliveries</h3>
      {deliveries.length === 0 ? (
        <p className="pg-muted">No delivery yet.</p>
      ) : (
        <ul className="pg-webhooks-list" aria-label="Recent deliveries">
          {deliveries.map((delivery) => (
            <li key={delivery.deliveryId} className="pg-webhooks-item">
              <div>
                <strong>{delivery.eventType}</strong>{' '}
                <span
                  className={`pg-badge ${delivery.state === 'delivered' ? 'pg-badge-ok' : 'pg-badge-bad'}`}
                >
                  {delivery.state}
                  {delivery.lastStatus !== undefined ? ` · ${delivery.lastStatus}` : ''}
                  {delivery.lastError && delivery.state !== 'delivered' ? ` · ${delivery.lastError}` : ''}
                </span>
              </div>
              <dl className="pg-webhooks-facts">
                <dt>Event id</dt>
                <dd>
                  <code>{delivery.eventId}</code>
                </dd>
                <dt>Attempt</dt>
                <dd>{delivery.attempts}</dd>
                <dt>Time</dt>
                <dd>{when(delivery.request?.sentAtMs ?? delivery.createdAtMs)}</dd>
              </dl>
              {delivery.request ? (
                <details>
                  <summary>Signed request</summary>
                  <pre className="pg-webhooks-request">{signedRequestText(delivery)}</pre>
                </details>
              ) : null}
              <button
                type="button"
                className="pg-button"
                disabled={busy}
                aria-label={`Redeliver ${delivery.eventType} ${delivery.eventId}`}
                onClick={() => void act(() => calls.redeliver(delivery.eventId, delivery.endpointId))}
              >
                Redeliver
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
