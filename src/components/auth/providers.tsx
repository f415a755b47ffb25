import type { OAuthMethod } from '@latchkey/protocol'
import type { ReactNode } from 'react'
import type { MessageKey } from '../i18n/en.ts'
import { AppleMark, DiscordMark, FacebookMark, GoogleMark, XMark } from '../ui/icons.tsx'

export const PROVIDER_NAME: Record<OAuthMethod, MessageKey> = {
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
