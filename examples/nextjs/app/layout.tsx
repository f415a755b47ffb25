// A Server Component: `latchkey` is a client boundary ('use client'), so the provider and the
// drop-ins render here directly. The config is plain strings, which cross the boundary as props.
import { LatchkeyProvider } from 'latchkey'
import 'latchkey/styles.css'
import type { ReactNode } from 'react'

export const metadata = { title: 'Latchkey on Next.js' }

// `npx latchkey-service dev --env .env.local` writes these (NEXT_PUBLIC_: also readable in the browser).
const config = {
  authProxyUrl: process.env.NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_URL ?? 'http://localhost:8787',
  baseUrl: process.env.NEXT_PUBLIC_LATCHKEY_BASE_URL ?? 'http://localhost:8787',
  authProxyConfigId: process.env.NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_CONFIG_ID ?? '',
  organizationId: process.env.NEXT_PUBLIC_LATCHKEY_ORGANIZATION_ID ?? '',
  trustedSignerPublicKey: process.env.NEXT_PUBLIC_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY,
}

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: 'system-ui, sans-serif', margin: '2rem' }}>
        <LatchkeyProvider config={config}>{children}</LatchkeyProvider>
      </body>
    </html>
  )
}
