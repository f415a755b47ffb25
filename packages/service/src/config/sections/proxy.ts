import { type ProxySettings, SIGN_IN_METHODS } from '@latchkey/protocol'
import { z } from 'zod'
import { MAX_SESSION_SECONDS } from '../../domain/sessions.ts'
import { isOrigin } from './server.ts'

export const proxySection = z
  .strictObject({
    allowed_origins: z
      .array(
        z.string().refine((value) => value === '*' || isOrigin(value), {
          error: 'must be an origin such as https://app.example.com (scheme, host, optional port; no path)',
        }),
        { error: 'must be a list of origins' },
      )
      .min(1, { error: 'must list at least one origin' })
      .optional()
      .describe(
        'Origins of the apps that may use the auth proxy and embed the service\'s frames, e.g. `["https://app.example.com"]`. `start` refuses `*`.',
      ),
    session_seconds: z
      .int({ error: `must be a whole number of seconds from 1 to ${MAX_SESSION_SECONDS}` })
      .min(1, { error: `must be a whole number of seconds from 1 to ${MAX_SESSION_SECONDS}` })
      .max(MAX_SESSION_SECONDS, {
        error: `must be a whole number of seconds from 1 to ${MAX_SESSION_SECONDS}`,
      })
      .default(900)
      .describe('Lifetime of a session the auth proxy issues when the login asks for none, in seconds.'),
    max_session_seconds: z
      .int({ error: `must be a whole number of seconds from 60 to ${MAX_SESSION_SECONDS}` })
      .min(60, { error: `must be a whole number of seconds from 60 to ${MAX_SESSION_SECONDS}` })
      .max(MAX_SESSION_SECONDS, {
        error: `must be a whole number of seconds from 60 to ${MAX_SESSION_SECONDS}`,
      })
      .optional()
      .describe(
        `Longest session any login of the organization and its sub-organizations gets, in seconds: a login asking for longer (\`expirationSeconds\`, up to ${MAX_SESSION_SECONDS}), a session profile lasting longer, or a read-only session (an hour), gets this; a sign-up through the auth proxy bringing a longer session key is refused. At least \`session_seconds\`. Unset: the stored setting (${MAX_SESSION_SECONDS} unless changed).`,
      ),
    enabled_methods: z
      .array(z.enum(SIGN_IN_METHODS, { error: `must be one of ${SIGN_IN_METHODS.join(', ')}` }), {
        error: 'must be a list of sign-in methods',
      })
      .default(['email', 'sms', 'passkey'])
      .describe(`Sign-in methods the auth proxy offers: ${SIGN_IN_METHODS.join(', ')}.`),
    otp_length: z
      .int({ error: 'must be a whole number of characters from 6 to 9' })
      .min(6, { error: 'must be a whole number of characters from 6 to 9' })
      .max(9, { error: 'must be a whole number of characters from 6 to 9' })
      .optional()
      .describe(
        "Shortest one-time code the service sends (6 to 9 characters); an `init_otp` may ask for a longer one, never a shorter one. The kit's prebuilt code entry (`OtpStep`) shows 6 fields unless given `length`. Unset: the stored setting (6 unless changed).",
      ),
    otp_alphabet: z
      .enum(['digits', 'alphanumeric'], { error: 'must be "digits" or "alphanumeric"' })
      .optional()
      .describe(
        "The characters of the codes: `digits` (0-9), or `alphanumeric` (Crockford's base 32: 0-9 and A-Z without I, L, O, U; accepted in either case, O as 0 and I, L as 1): 6 alphanumeric characters are about as hard to guess as 9 digits. The kit's prebuilt code entry (`OtpStep`) takes digits only: use `alphanumeric` with your own code entry. Unset: the stored setting (digits unless changed).",
      ),
    app_name: z
      .string({ error: 'must be a string' })
      .min(1)
      .max(100)
      .optional()
      .describe(
        "Your app's name, as it appears in one-time-code messages. Default: the organization's name.",
      ),
  })
  .refine(
    // Judged only for a ceiling that is itself valid (an invalid one has its own refusal).
    ({ session_seconds, max_session_seconds: ceiling }) =>
      ceiling === undefined || !Number.isInteger(ceiling) || ceiling < 60 || session_seconds <= ceiling,
    { error: 'must not be longer than max_session_seconds', path: ['session_seconds'] },
  )
  .describe('The auth proxy of the parent organization (written by `init`, updated by every `start`).')

export type ProxySection = z.infer<typeof proxySection>

/** The auth-proxy settings the section sets (the rest keep their stored or default values). */
export function proxyOptions(parsed: ProxySection): Partial<ProxySettings> {
  return {
    ...(parsed.allowed_origins ? { allowedOrigins: [...new Set(parsed.allowed_origins)] } : {}),
    sessionExpirationSeconds: String(parsed.session_seconds),
    ...(parsed.max_session_seconds !== undefined
      ? { maxSessionExpirationSeconds: String(parsed.max_session_seconds) }
      : {}),
    enabledProviders: [...new Set(parsed.enabled_methods)],
    ...(parsed.otp_length !== undefined ? { otpLength: parsed.otp_length } : {}),
    ...(parsed.otp_alphabet !== undefined ? { otpAlphabet: parsed.otp_alphabet } : {}),
    ...(parsed.app_name !== undefined ? { appName: parsed.app_name } : {}),
  }
}
