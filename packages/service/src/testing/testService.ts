import { type CreateServiceOptions, createService, type Service } from '../assembly/createService.ts'

/** The origin a test client pretends the in-process service has. */
export const TEST_SERVICE_URL = 'http://localhost:8787'

/** What a client (the kit's `createLatchkey`, or any other) needs to talk to an in-process service. */
export interface TestClientConfig {
  authProxyUrl: string
  baseUrl: string
  authProxyConfigId: string
  organizationId: string
  trustedSignerPublicKey: string
  /** Answers in process: no port, no network. */
  fetch: Service['fetch']
}

/**
 * A real service in this process (memory storage) and the client configuration that talks to it
 * through `fetch`, for component tests, stories and benches.
 */
export async function createTestService(options: CreateServiceOptions & { url?: string } = {}): Promise<{
  service: Service
  clientConfig: TestClientConfig
}> {
  const { url = TEST_SERVICE_URL, ...serviceOptions } = options
  const service = await createService(serviceOptions)
  const dev = service.dev
  return {
    service,
    clientConfig: {
      authProxyUrl: url,
      baseUrl: url,
      authProxyConfigId: dev.authProxyConfigId ?? 'missing',
      organizationId: dev.organizationId,
      trustedSignerPublicKey: dev.signerPublicKey,
      fetch: service.fetch,
    },
  }
}
