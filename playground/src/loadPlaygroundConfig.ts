import type { EvmConfig } from './SendTransactionPanel.tsx'

/** One local service, as printed on its `--json` line. */
export interface PlaygroundService {
  baseUrl: string
  authProxyUrl: string
  organizationId: string
  authProxyConfigId: string
  /** Signs export/import bundles (`trustedSignerPublicKey` in the kit's config). */
  trustedSignerPublicKey: string
  /** The dev outbox, where OTP codes are delivered. */
  outboxUrl: string
  /** The parent organization's root API key: dev credentials, used only by the operator page. */
  apiPublicKey: string
  apiPrivateKey: string
  /** Extra client options for this service (the e2e runner's short-session service sets session timing). */
  client?: { session?: { autoRefresh?: boolean; warningLeadMs?: number } }
}

export interface PlaygroundConfig {
  /** The name of the service this page uses (`?service=<name>`, else `default`). */
  serviceName: string
  service: PlaygroundService
  evm: EvmConfig | null
}

const SERVICE_KEY = 'latchkey-playground:service'

/**
 * Reads `/playground-config.json` (served by the playground's Vite plugin). A page opened with
 * `?service=<name>` keeps using that service for the rest of the tab's life (sessionStorage), so
 * OAuth redirects and reloads stay on it.
 */
export async function loadPlaygroundConfig(): Promise<PlaygroundConfig> {
  const response = await fetch('/playground-config.json', { cache: 'no-store' })
  const body = (await response.json()) as {
    services?: Record<string, PlaygroundService>
    evm?: EvmConfig | null
    error?: string
  }
  if (!response.ok || !body.services)
    throw new Error(body.error ?? `playground config: HTTP ${response.status}`)
  const requested = new URLSearchParams(window.location.search).get('service')
  if (requested) sessionStorage.setItem(SERVICE_KEY, requested)
  const serviceName = requested ?? sessionStorage.getItem(SERVICE_KEY) ?? 'default'
  const service = body.services[serviceName]
  if (!service)
    throw new Error(
      `No local service named "${serviceName}"; this playground knows ${Object.keys(body.services).join(', ')}.`,
    )
  return { serviceName, service, evm: body.evm ?? null }
}
