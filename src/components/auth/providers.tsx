import type { OAuthMethod } from '@latchkey/protocol'
import type { ReactNode } from 'react'
import { AppleMark, DiscordMark, FacebookMark, GoogleMark, XMark } from '../ui/icons.tsx'
import type { UiKey } from '../ui/uiStrings.ts'

export const PROVIDER_NAME: Record<OAuthMethod, UiKey> = {
  google: 'providerGoogle',
  apple: 'providerApple',
  x: 'providerX',
  discord: 'providerDiscord',
  facebook: 'providerFacebook',
}

export const PROVIDER_MARK: Record<OAuthMethod, () => ReactNode> = {
  google: GoogleMark,
  apple: AppleMark,
  x: XMark,
  discord: DiscordMark,
  facebook: FacebookMark,
}
