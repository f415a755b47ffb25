import { type CreateServiceOptions, createService, type Service } from '@latchkey/service'
import { configure, render } from '@testing-library/react'
import type { ReactElement } from 'react'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { createLatchkey, LatchkeyProvider } from '../../react/index.ts'

export const SERVICE_URL = 'http://localhost:8787'

// Real service round trips and lazily loaded steps can take seconds on a loaded 2-core machine.
configure({ asyncUtilTimeout: 5_000 })

/** A real in-process local service and the provider config that talks to it. */
export function createTestService(options: CreateServiceOptions = {}) {
  const service = createService(options)
  const config = {
    authProxyUrl: SERVICE_URL,
    baseUrl: SERVICE_URL,
    authProxyConfigId: service.dev.authProxyConfigId ?? 'missing',
    organizationId: service.dev.organizationId,
    fetch: service.fetch,
    storage: null,
    trustedSignerPublicKey: service.dev.signerPublicKey,
    polling: { intervalMs: 10, timeoutMs: 2_000 },
  }
  return { service, config }
}

/** Renders `ui` under a provider wired to a fresh service. */
export function renderWithService(ui: ReactElement, options: CreateServiceOptions = {}) {
  const { service, config } = createTestService(options)
  const result = render(<LatchkeyProvider config={config}>{ui}</LatchkeyProvider>)
  return { ...result, service, config }
}

/** The newest code the service "sent" to `contact` (the dev outbox). */
export async function latestCode(service: Service, contact: string): Promise<string> {
  const response = await service.fetch(
    `${SERVICE_URL}/dev/outbox.json?contact=${encodeURIComponent(contact)}`,
  )
  const { messages } = (await response.json()) as { messages: { code: string }[] }
  if (!messages[0]) throw new Error(`no code sent to ${contact}`)
  return messages[0].code
}

/** A client signed in by e-mail OTP (the real flow, code read from the dev outbox). */
export async function signedInClient(options: CreateServiceOptions = {}, email = 'ana@example.com') {
  const { service, config } = createTestService(options)
  const client = createLatchkey(config)
  const signIn = async (contact: string) => {
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact })
    return completeOtpSignIn(client, {
      ...started,
      otpCode: await latestCode(service, contact),
      userName: 'Ana',
    })
  }
  const { session } = await signIn(email)
  const renderUi = (ui: ReactElement) => render(<LatchkeyProvider client={client}>{ui}</LatchkeyProvider>)
  return { service, client, session, signIn, render: renderUi }
}
