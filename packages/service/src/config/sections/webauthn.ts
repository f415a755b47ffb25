import { z } from 'zod'
import type { WebAuthnOptions } from '../../kernel/Runtime.ts'
import { isOrigin } from './server.ts'

export const webauthnSection = z
  .strictObject({
    rp_id: z
      .string({ error: 'must be a domain name (a string)' })
      .regex(/^[a-z0-9.-]+$/i, { error: 'must be a domain name such as example.com (no scheme, no port)' })
      .optional()
      .describe(
        "Passkey relying-party id: your app's registrable domain, e.g. `example.com`. Default: the host of `server.public_url`.",
      ),
    origins: z
      .array(
        z.string().refine(isOrigin, { error: 'must be an origin such as https://app.example.com (no path)' }),
        { error: 'must be a list of origins' },
      )
      .optional()
      .describe('Origins accepted in passkey client data. Default: `proxy.allowed_origins`.'),
  })
  .describe('Passkeys (WebAuthn).')

export type WebauthnSection = z.infer<typeof webauthnSection>

/** The relying party; undefined fields fall back as described above. */
export function webauthnOptions(
  parsed: WebauthnSection,
  fallback: { publicUrl?: string | undefined; allowedOrigins?: string[] | undefined },
): WebAuthnOptions {
  const rpId = parsed.rp_id ?? (fallback.publicUrl ? new URL(fallback.publicUrl).hostname : undefined)
  const origins = parsed.origins ?? fallback.allowedOrigins?.filter((origin) => origin !== '*')
  return { ...(rpId ? { rpId } : {}), ...(origins && origins.length > 0 ? { origins } : {}) }
}
