// Multi-step flows the specs share, written the way a person uses the playground: by role and
// accessible name, never by CSS class.
import { expect, type Locator, type Page } from '@playwright/test'
import { openPlayground, readOtpCode, type Stack, sentOtpIds, stack, uniqueEmail } from './fixtures.ts'

export type ServiceName = keyof Stack['services']

export const signInDialog = (page: Page): Locator => page.getByRole('dialog')

/** Opens the sign-in modal from the landing page. */
export async function openSignIn(page: Page) {
  await page.getByRole('button', { name: 'Sign in', exact: true }).first().click()
  const dialog = signInDialog(page)
  await expect(dialog).toBeVisible()
  return dialog
}

/** Types the OTP into the modal's code fields (focus the first box, type every digit). */
export async function enterOtp(page: Page, code: string) {
  const first = page.getByRole('textbox', { name: /^Digit 1 of \d+$/ })
  await expect(first).toBeVisible()
  await first.click()
  await page.keyboard.type(code)
}

/**
 * E-mail OTP from the landing page to the dashboard; returns the e-mail. A new address signs up,
 * a known one signs in: the same path.
 */
export async function signInWithEmail(
  page: Page,
  {
    service = 'default',
    email = uniqueEmail(),
    open = true,
  }: { service?: ServiceName; email?: string; open?: boolean } = {},
) {
  if (open) await openPlayground(page, service)
  await openSignIn(page)
  await completeEmailOtp(page, email, service)
  return email
}

/** In an open sign-in dialog: type the e-mail, read the code from the outbox, enter it. */
export async function enterEmailOtp(page: Page, email: string, service: ServiceName = 'default') {
  const dialog = signInDialog(page)
  const since = Date.now()
  const seen = await sentOtpIds(stack.services[service], email)
  await dialog.getByLabel('Email address').fill(email)
  await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
  const code = await readOtpCode(stack.services[service], email, since, undefined, seen)
  await enterOtp(page, code)
}

/** In an open sign-in dialog: the e-mail and its code, then the dashboard (`expectSignedIn`). */
export async function completeEmailOtp(page: Page, email: string, service: ServiceName = 'default') {
  await enterEmailOtp(page, email, service)
  await expectSignedIn(page)
}

/**
 * After the credential: a new account is offered a passkey, which we decline; then (or at once,
 * for an existing account) the modal closes itself.
 */
export async function expectSignInModalClosed(page: Page) {
  const dialog = signInDialog(page)
  const notNow = dialog.getByRole('button', { name: 'Not now', exact: true })
  // The offer may still be loading when the session already exists: decline it whenever it shows,
  // until the modal has closed.
  await expect(async () => {
    if (await notNow.isVisible()) await notNow.click()
    await expect(dialog).toHaveCount(0, { timeout: 1000 })
  }).toPass({ timeout: 20_000 })
}

/** Signed in: the modal has closed itself (see `expectSignInModalClosed`) and the dashboard shows. */
export async function expectSignedIn(page: Page) {
  await expectSignInModalClosed(page)
  await expect(page.getByRole('heading', { name: 'Sessions in this browser' })).toBeVisible()
}

export async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click()
  await expect(page.getByRole('heading', { name: 'A wallet in your app, in one modal.' })).toBeVisible()
}

/** The `<WalletList/>` card. */
export const walletsCard = (page: Page): Locator => page.getByRole('region', { name: 'Wallets', exact: true })

/** Creates a wallet (Ethereum + Solana, the defaults) through `<WalletList/>`; returns its article. */
export async function createWallet(page: Page, name = 'Main') {
  const wallets = walletsCard(page)
  await wallets.getByRole('button', { name: 'Create wallet' }).first().click()
  await wallets.getByLabel('Wallet name').fill(name)
  await wallets
    .getByRole('form', { name: 'Create wallet' })
    .getByRole('button', { name: 'Create wallet' })
    .click()
  const wallet = wallets.getByRole('article', { name })
  await expect(wallet.getByRole('listitem')).toHaveCount(2, { timeout: 20_000 })
  return wallet
}

/** The full addresses of a wallet's accounts on one network, as `<WalletList/>` lists them. */
export async function addressesOf(wallet: Locator, network: string): Promise<string[]> {
  const items = wallet.getByRole('listitem').filter({ hasText: network })
  const texts = await items.locator('.lk-visually-hidden').allTextContents()
  return texts.map((t) => t.trim())
}
