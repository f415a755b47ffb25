import { afterEach, describe, expect, it, vi } from 'vitest'
import { ConfigInvalidError, NetworkError, ServiceError } from '../../core/errors.ts'
import { en } from '../i18n/en.ts'
import { createTranslate } from '../i18n/messages.ts'
import { errorMessage } from './errorMessage.ts'

const t = createTranslate(en)
const notFound = () =>
  new ServiceError('proxy config not found', {
    code: 'PROXY_CONFIG_NOT_FOUND',
    status: 404,
    details: { errorCode: 'PROXY_CONFIG_NOT_FOUND' },
  })

describe('errorMessage', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
    vi.unstubAllGlobals()
    vi.restoreAllMocks()
  })

  it('says why in development: the sentence, the service’s code and what to fix', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    expect(errorMessage(t, notFound())).toBe(
      'Sign-in isn’t set up correctly for this app. (PROXY_CONFIG_NOT_FOUND) ' +
        'Check `authProxyConfigId`: use the id printed by `latchkey-service dev`.',
    )
    expect(errorMessage(t, new NetworkError('http://127.0.0.1:8787/v1/wallet_kit_config'))).toMatch(
      /\(NETWORK_ERROR\) Is the service running at http:\/\/127\.0\.0\.1:8787\? Start it with `npx latchkey-service dev --env \.env\.local`\.$/,
    )
    expect(errorMessage(t, new ConfigInvalidError('bad', 'organizationId'))).toMatch(
      /\(CONFIG_INVALID\) Fix the `organizationId` option/,
    )
    // A code without a sentence of its own is no longer a bare "Something went wrong".
    const other = new ServiceError('x', { code: 'RPC_NOT_CONFIGURED' })
    expect(errorMessage(t, other)).toBe(
      'Something went wrong. Try again. (RPC_NOT_CONFIGURED) The browser console has the details.',
    )
  })

  it('keeps a person’s own slip to its sentence, and production builds to the sentence alone', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    expect(errorMessage(t, new ServiceError('x', { code: 'OTP_INVALID' }))).toBe(en.otpInvalid)
    vi.stubEnv('NODE_ENV', 'production')
    expect(errorMessage(t, notFound())).toBe('Sign-in isn’t set up correctly for this app.')
  })

  it('logs each error with its code to the console once, in every build, but not a person’s slip', () => {
    const log = vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.stubEnv('NODE_ENV', 'production')
    const error = notFound()
    errorMessage(t, error)
    errorMessage(t, error)
    expect(log).toHaveBeenCalledTimes(1)
    expect(log).toHaveBeenCalledWith('[latchkey] PROXY_CONFIG_NOT_FOUND:', error)
    errorMessage(t, new ServiceError('x', { code: 'OTP_INVALID' }))
    expect(log).toHaveBeenCalledTimes(1)
  })

  it('tells a passkey user on an IP address to open the app on localhost', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.stubGlobal('location', new URL('http://127.0.0.1:5173/app?x=1'))
    const invalidDomain = Object.assign(new Error('127.0.0.1 is an invalid domain'), {
      name: 'WebAuthnError',
      code: 'ERROR_INVALID_DOMAIN',
    })
    const expected = 'Passkeys need a domain name, not an IP address: open this app on http://localhost:5173.'
    expect(errorMessage(t, invalidDomain)).toBe(expected)
    const security = new DOMException('This is an invalid domain.', 'SecurityError')
    expect(errorMessage(t, security)).toBe(expected)
    // On a domain, a SecurityError is not this problem.
    vi.stubGlobal('location', new URL('http://localhost:5173/'))
    expect(errorMessage(t, new DOMException('x', 'SecurityError'))).toBe(en.errorGeneric)
  })
})
