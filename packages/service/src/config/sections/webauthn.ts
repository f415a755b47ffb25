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
      // An empty list once meant "any origin": what the dev service accepts.
      .min(1, { error: 'must list at least one origin (leave it out to use proxy.allowed_origins)' })
      .optional()
      .describe(
        'Origins accepted in passkey client data (at least one). Default: `proxy.allowed_origins`. `start` refuses a configuration where neither names an origin.',
      ),
  })
  .describe('Passkeys (WebAuthn).')

export type WebauthnSection = z.infer<typeof webauthnSection>

/**
 * The relying party; undefined fields fall back as described above. The runtime reads no
 * `origins` as "any origin" (the dev service), so an empty list (which the schema refuses) falls
 * back like an absent one rather than win over `proxy.allowed_origins` and then be dropped; with
 * no origin left, `start` refuses (config/productionRefusals.ts).
 */
export function webauthnOptions(
  parsed: WebauthnSection,
  fallback: { publicUrl?: string | undefined; allowedOrigins?: string[] | undefined },
): WebAuthnOptions {
  const rpId = parsed.rp_id ?? (fallback.publicUrl ? new URL(fallback.publicUrl).hostname : undefined)
  const origins =
    parsed.origins !== undefined && parsed.origins.length > 0
      ? parsed.origins
      : fallback.allowedOrigins?.filter((origin) => origin !== '*')
  return { ...(rpId ? { rpId } : {}), ...(origins && origins.length > 0 ? { origins } : {}) }
}
