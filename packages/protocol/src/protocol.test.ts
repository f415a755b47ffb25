import { describe, expect, it } from 'vitest'
import {
  ACTIVITIES,
  ADDRESS_FORMATS,
  activityResultOf,
  decodeApiKeyStamp,
  encodeApiKeyStamp,
} from './index.ts'
import { webAuthnChallengeOf } from './webAuthnChallengeOf.ts'

describe('protocol', () => {
  it('names every address format of the seed (11 + 20 bitcoin + 2 doge + 3 ton)', () => {
    expect(ADDRESS_FORMATS).toHaveLength(38)
    expect(new Set(ADDRESS_FORMATS).size).toBe(38)
    expect(ADDRESS_FORMATS).toContain('ADDRESS_FORMAT_BITCOIN_SIGNET_P2WSH')
  })

  it('versions create_sub_organization in type, intent and result keys', () => {
    expect(ACTIVITIES.create_sub_organization).toEqual({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7',
      intentKey: 'createSubOrganizationIntentV7',
      resultKey: 'createSubOrganizationResultV7',
      types: ['ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8'],
      versionedResult: true,
      resource: 'ORGANIZATION',
      action: 'CREATE',
      proxyUser: true,
      readOnly: false,
    })
    expect(ACTIVITIES.sign_raw_payloads.resultKey).toBe('signRawPayloadsResult')
    expect(ACTIVITIES.oauth2_authenticate.intentKey).toBe('oauth2AuthenticateIntent')
  })

  it('reads results directly or from the nested activity.result.activity', () => {
    const result = { signRawPayloadsResult: { signatures: [] } }
    expect(activityResultOf('sign_raw_payloads', { result })).toEqual({ signatures: [] })
    expect(activityResultOf('sign_raw_payloads', { result: { activity: { result } } })).toEqual({
      signatures: [],
    })
    expect(activityResultOf('sign_raw_payloads', { result: {} })).toBeUndefined()
  })

  it('round-trips an X-Stamp with keys in order and no padding', () => {
    const stamp = { publicKey: '02ab', scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature: '3044' } as const
    const header = encodeApiKeyStamp(stamp)
    expect(header).not.toMatch(/[=+/]/)
    expect(Buffer.from(header, 'base64url').toString()).toBe(
      '{"publicKey":"02ab","scheme":"SIGNATURE_SCHEME_TK_API_P256","signature":"3044"}',
    )
    expect(decodeApiKeyStamp(header)).toEqual(stamp)
    expect(() =>
      decodeApiKeyStamp(Buffer.from('{"publicKey":"a","signature":"b"}').toString('base64url')),
    ).toThrow(/scheme/)
  })

  it('derives the WebAuthn challenge as hex SHA-256 of the body', () => {
    expect(webAuthnChallengeOf('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })
})
