import type { CreateServiceOptions } from '@latchkey/service'
import {
  createTestService as createInProcessService,
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
  TEST_SERVICE_URL,
} from '@latchkey/service/testing'
import { configure, render } from '@testing-library/react'
import type { ReactElement } from 'react'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { createLatchkey, type LatchkeyConfig, LatchkeyProvider } from '../../react/index.ts'

export const SERVICE_URL = TEST_SERVICE_URL
export { installSoftAuthenticator, latestCode, type SoftAuthenticator }

// Real service round trips and lazily loaded steps can take seconds on a loaded 2-core machine.
configure({ asyncUtilTimeout: 5_000 })

/** A real in-process local service and the provider config that talks to it. */
export async function createTestService(options: CreateServiceOptions = {}) {
  const { service, clientConfig } = await createInProcessService(options)
  const config = { ...clientConfig, storage: null, polling: { intervalMs: 10, timeoutMs: 2_000 } }
  return { service, config }
}

/** Renders `ui` under a provider wired to a fresh service. */
export async function renderWithService(ui: ReactElement, options: CreateServiceOptions = {}) {
  const { service, config } = await createTestService(options)
  const result = render(<LatchkeyProvider config={config}>{ui}</LatchkeyProvider>)
  return { ...result, service, config }
}

/** A client signed in by e-mail OTP (the real flow, code read from the dev outbox). */
export async function signedInClient(
  options: CreateServiceOptions = {},
  email = 'ana@example.com',
  clientOptions: Partial<LatchkeyConfig> = {},
) {
  const { service, config } = await createTestService(options)
  const client = createLatchkey({ ...config, ...clientOptions })
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
