import { ERROR_CODES, type ErrorCode, GRPC, HTTP_STATUS_OF } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createWallet } from './actions/activities/createWallet.ts'
import { getAccount } from './actions/proxy/getAccount.ts'
import { getWhoami } from './actions/queries/getWhoami.ts'
import { createLatchkey } from './createLatchkey.ts'
import { ConfigInvalidError, fromErrorBody, LatchkeyError, ServiceError } from './errors.ts'
import { createIndexedDbKeyStore } from './keyStore/createKeyStore.ts'
import { createClientFixture, SERVICE_URL } from './test/fixtures.ts'
import { httpRequest } from './transport/http.ts'

const base = {
  authProxyUrl: SERVICE_URL,
  baseUrl: SERVICE_URL,
  authProxyConfigId: 'c',
  organizationId: 'o',
  storage: null,
}

describe('errors', () => {
  it('maps every service error code of the shared list to the same LatchkeyError code', () => {
    for (const [code, grpc] of Object.entries(ERROR_CODES) as [
      ErrorCode,
      (typeof ERROR_CODES)[ErrorCode],
    ][]) {
      const error = fromErrorBody(
        { code: grpc, message: code, details: { errorCode: code } },
        HTTP_STATUS_OF[grpc],
      )
      expect(error).toBeInstanceOf(ServiceError)
      expect(error).toMatchObject({ code, grpcCode: grpc, status: HTTP_STATUS_OF[grpc], message: code })
    }
  })

  it('maps the public service’s session-key messages and bodies without our codes', () => {
    expect(
      fromErrorBody({ code: 16, message: 'expired api key publicKey 02ab', details: {} } as never).code,
    ).toBe('API_KEY_EXPIRED')
    expect(
      fromErrorBody({
        code: 16,
        message: 'could not find public key in organization or its parent organization',
        details: {},
      } as never).code,
    ).toBe('PUBLIC_KEY_NOT_FOUND')
    expect(fromErrorBody('<html>', 502).code).toBe('INTERNAL')
    expect(fromErrorBody(undefined, 429).code).toBe('RATE_LIMITED')
  })

  it('turns real service refusals into ServiceErrors naming the field', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    const error = await createWallet(fx.client, { walletName: 'x', mnemonicLength: 13 as 12 }).catch((e) => e)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({
      status: 400,
      grpcCode: GRPC.INVALID_ARGUMENT,
      field: 'parameters.mnemonicLength',
    })
    expect(['FIELD_INVALID', 'ENUM_INVALID']).toContain(error.code)
  })

  it('maps transport failures: network, timeout, abort, non-JSON', async () => {
    const boom = createLatchkey({ ...base, fetch: () => Promise.reject(new TypeError('Failed to fetch')) })
    await expect(getAccount(boom, { filterType: 'EMAIL', filterValue: 'a@b.co' })).rejects.toMatchObject({
      code: 'NETWORK_ERROR',
    })
    const hang = (_: unknown, init?: RequestInit) =>
      new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
      )
    const slow = createLatchkey({ ...base, fetch: hang, requestTimeoutMs: 20 })
    await expect(getAccount(slow, { filterType: 'EMAIL', filterValue: 'a@b.co' })).rejects.toMatchObject({
      code: 'TIMEOUT',
    })
    const controller = new AbortController()
    const aborted = httpRequest({ url: SERVICE_URL, body: '{}', fetch: hang, signal: controller.signal })
    controller.abort()
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' })
    const html = createLatchkey({ ...base, fetch: async () => new Response('<html>', { status: 200 }) })
    await expect(getAccount(html, { filterType: 'EMAIL', filterValue: 'a@b.co' })).rejects.toMatchObject({
      code: 'INTERNAL',
    })
  })

  it('refuses to act without a session, and without IndexedDB', async () => {
    const client = createLatchkey({ ...base, fetch: () => Promise.reject(new Error('unused')) })
    await expect(getWhoami(client, {})).rejects.toMatchObject({
      name: 'NotSignedInError',
      code: 'NOT_SIGNED_IN',
    })
    const saved = globalThis.indexedDB
    // @ts-expect-error simulate a runtime without IndexedDB
    delete globalThis.indexedDB
    try {
      await expect(createIndexedDbKeyStore().create()).rejects.toMatchObject({
        code: 'KEY_STORE_UNAVAILABLE',
      })
    } finally {
      globalThis.indexedDB = saved
    }
  })

  it('rejects an invalid config with a named error', () => {
    expect(() => createLatchkey({ ...base, baseUrl: '' })).toThrow(LatchkeyError)
    expect(() => createLatchkey({ ...base, baseUrl: '' })).toThrow(/baseUrl/)
  })

  it.each([
    [
      { authProxyConfigId: '…' },
      'authProxyConfigId',
      /is still the placeholder "…"; use the id printed by `latchkey-service dev`/,
    ],
    [{ organizationId: '...' }, 'organizationId', /placeholder/],
    [{ organizationId: '<your organization id>' }, 'organizationId', /placeholder/],
    [{ trustedSignerPublicKey: '04…' }, 'trustedSignerPublicKey', /placeholder/],
    [{ trustedSignerPublicKey: '02ab' }, 'trustedSignerPublicKey', /uncompressed P-256/],
    [{ authProxyUrl: 'localhost:8787' }, 'authProxyUrl', /must be an http\(s\) URL, got "localhost:8787"/],
    [{ baseUrl: 'ftp://x.test' }, 'baseUrl', /http\(s\) URL/],
    [{ authProxyConfigId: 'cfg id' }, 'authProxyConfigId', /printable ASCII/],
    [{ authProxyConfigId: 'ид' }, 'authProxyConfigId', /printable ASCII/],
    [{ organizationId: undefined }, 'organizationId', /is required/],
    [{ requestTimeoutMs: -1 }, 'requestTimeoutMs', /positive number/],
  ])('names the field of a config that cannot work: %j', (patch, field, message) => {
    let error: unknown
    try {
      createLatchkey({ ...base, ...patch } as never)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigInvalidError)
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', field })
    expect((error as Error).message).toMatch(message)
  })

  it('accepts a real config, the signer key in either case', () => {
    const key = `04${'ab'.repeat(64)}`
    expect(() => createLatchkey({ ...base, trustedSignerPublicKey: key })).not.toThrow()
    expect(() =>
      createLatchkey({ ...base, trustedSignerPublicKey: key.toUpperCase().replace('0X', '') }),
    ).not.toThrow()
  })
})
