// Exposes the published clients to the spec, which drives them through page.evaluate. Nothing
// here changes how they talk to the service: each is constructed with its documented options.
import { TurnkeyClient } from '@turnkey/core'
import { encryptOtpCodeToBundle, encryptPrivateKeyToBundle, encryptWalletToBundle } from '@turnkey/crypto'
import { TurnkeyClient as TurnkeyClientV1 } from 'turnkey-core-1'

const params = new URLSearchParams(location.search)
const config = {
  apiBaseUrl: params.get('apiBaseUrl')!,
  authProxyUrl: params.get('authProxyUrl')!,
  authProxyConfigId: params.get('authProxyConfigId')!,
  organizationId: params.get('organizationId')!,
}

declare global {
  interface Window {
    published: {
      config: typeof config
      TurnkeyClient: typeof TurnkeyClient
      TurnkeyClientV1: typeof TurnkeyClientV1
      encryptOtpCodeToBundle: typeof encryptOtpCodeToBundle
      encryptWalletToBundle: typeof encryptWalletToBundle
      encryptPrivateKeyToBundle: typeof encryptPrivateKeyToBundle
    }
  }
}

window.published = {
  config,
  TurnkeyClient,
  TurnkeyClientV1,
  encryptOtpCodeToBundle,
  encryptWalletToBundle,
  encryptPrivateKeyToBundle,
}
document.getElementById('status')!.textContent = 'ready'
