import { ACTIVITIES, ACTIVITY_PATHS, QUERY_PATHS } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createHarness, type Reply } from '../testing/harness.ts'

/** Every field name any activity or query takes, to fill bodies with wrong values. */
const FIELDS = [
  'signWith',
  'payloads',
  'encoding',
  'hashFunction',
  'verificationToken',
  'publicKey',
  'expirationSeconds',
  'invalidateExisting',
  'clientSignature',
  'userTagId',
  'newUserTagName',
  'addUserIds',
  'removeUserIds',
  'walletIds',
  'deleteWithoutExport',
  'address',
  'targetPublicKey',
  'userId',
  'userName',
  'walletName',
  'encryptedBundle',
  'accounts',
  'mnemonicLength',
  'walletId',
  'persist',
  'subOrganizationName',
  'rootUsers',
  'rootQuorumThreshold',
  'wallet',
  'disableEmailRecovery',
  'onrampProvider',
  'projectId',
  'publishableApiKey',
  'encryptedSecretApiKey',
  'sandboxMode',
  'userTagName',
  'userIds',
  'threshold',
  'signedTransaction',
  'caip2',
  'otpType',
  'contact',
  'otpId',
  'otpCode',
  'provider',
  'authCode',
  'redirectUri',
  'codeVerifier',
  'nonce',
  'clientId',
  'oidcToken',
  'apiKeys',
  'apiKeyIds',
  'authenticators',
  'authenticatorIds',
  'fingerprint',
  'activityId',
  'authenticatorId',
  'filterType',
  'filterValue',
  'paginationOptions',
]

const WRONG_VALUES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e300,
  true,
  '',
  'x',
  '\u0000',
  [],
  {},
  ['x'],
  [{}],
  [null],
  { curve: 1 },
  [
    {
      curve: 'CURVE_SECP256K1',
      pathFormat: 'PATH_FORMAT_BIP32',
      path: 'm/x',
      addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
    },
  ],
  'A'.repeat(3_000),
]

function expectCleanRefusal(reply: Reply, label: string) {
  if (reply.status >= 500 || reply.status < 400)
    throw new Error(
      `${label}: expected a 4xx, got ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`,
    )
  expect(reply.body).toEqual({
    code: expect.any(Number),
    message: expect.any(String),
    details: expect.objectContaining({ errorCode: expect.any(String) }),
  })
}

describe('bad input never crashes the service', () => {
  it('refuses wrong values in every field of every activity with a 4xx body', async () => {
    const h = await createHarness()
    for (const path of ACTIVITY_PATHS) {
      for (const [index, value] of WRONG_VALUES.entries()) {
        h.clock.advance(1)
        const parameters = Object.fromEntries(FIELDS.map((field) => [field, value]))
        const reply = await h.submit(path, parameters)
        // It takes no parameters, so it ignores unknown ones like every activity does.
        if (path === 'create_read_only_session' && reply.status === 200) continue
        expectCleanRefusal(reply, `${path} #${index}`)
      }
      for (const parameters of [undefined, null, 'params', [], 7]) {
        h.clock.advance(1)
        const reply = await h.submit(path, parameters)
        if (path === 'create_read_only_session' && parameters === undefined) continue
        expectCleanRefusal(reply, `${path} parameters=${JSON.stringify(parameters)}`)
        expect(reply.body.details.field).toBe('parameters')
      }
    }
    expect(await h.service.store.all('wallets')).toEqual([])
  }, 60_000)

  it('refuses wrong values in every query with a 4xx body', async () => {
    const h = await createHarness()
    for (const path of QUERY_PATHS) {
      for (const value of WRONG_VALUES) {
        const body = Object.fromEntries(FIELDS.map((field) => [field, value]))
        const reply = await h.query(path, body)
        if (reply.status === 200) continue // queries whose fields are all optional ignore unknown ones
        expectCleanRefusal(reply, `${path}`)
      }
    }
  })

  it('names the envelope problem: JSON, type, organization, parameters, size, route', async () => {
    const h = await createHarness()
    const stamped = (body: string) => {
      const [header, value] = h.root.stamp(body)
      return h.post('/public/v1/submit/create_wallet', body, { [header]: value })
    }
    expect(await stamped('{"type": ')).toMatchObject({
      status: 400,
      body: { code: 3, details: { errorCode: 'BODY_INVALID' } },
    })
    expect(await stamped('[1,2]')).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'BODY_INVALID' } },
    })
    expect(await stamped('"text"')).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'BODY_INVALID' } },
    })
    const invalidUtf8 = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])
    const [header, value] = h.root.stamp('{}')
    expect((await h.post('/public/v1/submit/create_wallet', invalidUtf8, { [header]: value })).status).toBe(
      400,
    )

    const wrongType = await h.submit(
      'create_wallet',
      { walletName: 'x', accounts: [] },
      { type: ACTIVITIES.sign_raw_payloads.type },
    )
    expect(wrongType).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'ACTIVITY_TYPE_MISMATCH', field: 'type' } },
    })
    const noOrg = await h.submit('create_wallet', { walletName: 'x', accounts: [] }, { organizationId: '' })
    expect(noOrg).toMatchObject({ status: 400, body: { details: { field: 'organizationId' } } })
    const big = await h.submit('create_wallet', { walletName: 'x'.repeat(300 * 1024), accounts: [] })
    expect(big).toMatchObject({ status: 413, body: { details: { errorCode: 'PAYLOAD_TOO_LARGE' } } })
    const [bigHeader, bigStamp] = h.root.stamp('{}')
    const streamed = await h.service.app.request('/public/v1/submit/create_wallet', {
      method: 'POST',
      headers: { [bigHeader]: bigStamp },
      body: new ReadableStream({
        pull(controller) {
          controller.enqueue(new Uint8Array(64 * 1024))
        },
      }),
      duplex: 'half',
    } as RequestInit)
    expect(streamed.status).toBe(413)
    expect((await streamed.json()).details.errorCode).toBe('PAYLOAD_TOO_LARGE')
    const longName = await h.submit('create_wallet', { walletName: 'x'.repeat(300), accounts: [] })
    expect(longName).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'PAYLOAD_TOO_LARGE', field: 'parameters.walletName' } },
    })
    const tooMany = await h.submit('sign_raw_payloads', {
      signWith: 'x',
      payloads: Array.from({ length: 101 }, () => '00'),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    })
    expect(tooMany).toMatchObject({
      status: 400,
      body: { details: { errorCode: 'PAYLOAD_TOO_LARGE', field: 'parameters.payloads' } },
    })
    expect(await h.submit('create_wallet' as never, {}, { type: 'ACTIVITY_TYPE_NOPE' })).toMatchObject({
      status: 400,
    })
    const unknownRoute = await h.post('/public/v1/submit/make_coffee', '{}')
    expect(unknownRoute).toMatchObject({
      status: 404,
      body: { code: 5, details: { errorCode: 'ROUTE_NOT_FOUND' } },
    })
    expect((await h.service.app.request('/nowhere')).status).toBe(404)
  })

  it('answers CORS preflights for the stamp headers', async () => {
    const h = await createHarness()
    const response = await h.service.app.request('/public/v1/submit/create_wallet', {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:5173',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'x-stamp',
      },
    })
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-headers')).toMatch(/X-Stamp/)
  })

  it('serves fetch(input, init) for the browser client', async () => {
    const h = await createHarness()
    const response = await h.service.fetch('http://local/public/v1/signer')
    expect(await response.json()).toEqual({
      signerPublicKey: h.service.dev.signerPublicKey,
      sessionPublicKey: h.service.dev.sessionPublicKey,
    })
  })
})
