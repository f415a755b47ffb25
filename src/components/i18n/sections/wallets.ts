import { enWallets } from '../en/wallets.ts'
import { defineStrings } from '../strings.ts'

/** The section's English, with its Spanish and Arabic loaded on first use (chunks of their own). */
export const walletsStrings = /* @__PURE__ */ defineStrings(enWallets, {
  es: () => import('../es/wallets.ts').then((m) => m.wallets),
  ar: () => import('../ar/wallets.ts').then((m) => m.wallets),
})
