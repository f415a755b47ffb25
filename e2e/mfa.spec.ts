import type { Locator, Page } from '@playwright/test'
import { secretOfUri, totpCode } from '../src/core/test/totpCode.ts'
import { addVirtualAuthenticator, expect, expectNoAxeViolations, openPlayground, test } from './fixtures.ts'
import { createWallet, expectSignedIn, openSignIn, signInWithEmail } from './flows.ts'

// Issue 38 in Chromium: an authenticator app enrolled from its QR code's secret (codes computed
// here, RFC 6238), an export that then asks for a code, and a send above a threshold that asks
// for a passkey (a CDP virtual authenticator). Keyboard only, at 320 px.

/** Presses Tab until `target` has focus; fails after `max` presses. */
async function tabTo(page: Page, target: Locator, max = 40) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return
  }
  throw new Error(`${target} never received focus`)
}

/** Nothing sticks out past the right edge of the screen (no sideways scrolling). */
async function expectNoHorizontalScroll(page: Page, screen: string) {
  const { scrollWidth, width } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    width: document.documentElement.clientWidth,
  }))
  expect(scrollWidth, `"${screen}" scrolls sideways`).toBeLessThanOrEqual(width)
}

/** The header's Security link, followed with the keyboard. */
async function openSecurityPage(page: Page) {
  const link = page.getByRole('navigation', { name: 'Playground' }).getByRole('link', { name: 'Security' })
  await link.focus()
  await page.keyboard.press('Enter')
  const settings = page.getByRole('region', { name: 'Security', exact: true })
  await expect(settings.getByRole('heading', { name: 'Your factors' })).toBeVisible({ timeout: 20_000 })
  return settings
}

test('an authenticator app from the QR code’s secret, then an export that asks for its code: keyboard only, 320 px', async ({
  page,
}) => {
  await page.setViewportSize({ width: 320, height: 720 })
  await signInWithEmail(page)
  await createWallet(page, 'Savings')
  const settings = await openSecurityPage(page)

  // Enrol: the QR code, the key and the otpauth:// link; the code is computed from what the page shows.
  await tabTo(page, settings.getByRole('button', { name: 'Add an authenticator app' }))
  await page.keyboard.press('Enter')
  await expect(settings.getByRole('heading', { name: 'Scan this QR code' })).toBeFocused({ timeout: 20_000 })
  await expect(settings.getByRole('img', { name: 'QR code of your authenticator app’s key' })).toBeVisible()
  const link = (await settings.locator('[data-lk-otpauth]').textContent())!.trim()
  const secret = secretOfUri(link)
  expect(link).toMatch(/^otpauth:\/\/totp\//)
  expect((await settings.locator('[data-lk-totp-secret]').textContent())!.trim()).toBe(secret)
  await expectNoAxeViolations(page, 'authenticator enrolment')
  await expectNoHorizontalScroll(page, 'authenticator enrolment')
  const field = settings.getByRole('textbox', { name: 'Enter a code to finish' })
  await tabTo(page, field)
  await page.keyboard.type(totpCode(secret))
  await page.keyboard.press('Enter')
  await expect(settings.getByText(/Your authenticator app is on/)).toBeFocused({ timeout: 20_000 })

  // "Exporting needs a second factor", switched on with the space bar.
  const rule = settings.getByRole('checkbox', { name: 'Exporting a wallet or key needs a second factor' })
  await tabTo(page, rule)
  await page.keyboard.press('Space')
  await expect(settings.getByText('Saved.')).toBeVisible({ timeout: 20_000 })
  await expect(rule).toBeChecked()
  await expectNoHorizontalScroll(page, 'security settings')

  // The export waits for the code: the challenge takes focus, a code of the next step finishes it.
  const tryIt = page.getByRole('region', { name: 'Try the rules' })
  await tabTo(page, tryIt.getByRole('button', { name: 'Export recovery phrase' }))
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog', { name: 'Export wallet' })
  await tabTo(page, dialog.getByLabel('I understand and I’m in a private place'))
  await page.keyboard.press('Space')
  await tabTo(page, dialog.getByRole('button', { name: 'Reveal recovery phrase' }))
  await page.keyboard.press('Enter')
  const code = dialog.getByRole('textbox', { name: 'Authenticator code' })
  await expect(code).toBeFocused({ timeout: 20_000 })
  await expect(dialog.getByRole('button', { name: 'Use a passkey' })).toBeVisible()
  await expectNoAxeViolations(page, 'export step-up')
  await expectNoHorizontalScroll(page, 'export step-up')
  await page.keyboard.type(totpCode(secret, Date.now() + 30_000))
  await page.keyboard.press('Enter')
  const frame = page.frameLocator('iframe[title="Your recovery phrase, in a secure frame"]')
  await expect(frame.getByRole('list', { name: 'recovery phrase' }).getByRole('listitem')).toHaveCount(12, {
    timeout: 20_000,
  })
})

test('"sends above 0.1 ETH need a passkey": a 0.2 ETH send waits for the passkey, then goes', async ({
  page,
}) => {
  const authenticator = await addVirtualAuthenticator(page)
  await openPlayground(page)
  const signIn = await openSignIn(page)
  await signIn.getByRole('button', { name: 'Continue with a passkey' }).click()
  await signIn
    .getByRole('button', { name: /Create an account with a passkey|Create a passkey/ })
    .first()
    .click()
  const create = signIn.getByRole('button', { name: 'Create a passkey' })
  if (await create.isVisible()) await create.click()
  await expectSignedIn(page)
  await createWallet(page, 'Everyday')
  const settings = await openSecurityPage(page)

  const rule = settings.getByRole('checkbox', { name: 'Sends above an amount need a passkey' })
  await tabTo(page, rule)
  await page.keyboard.press('Space')
  await expect(settings.getByRole('textbox', { name: 'Amount (ETH)' })).toHaveValue('0.1')
  await tabTo(page, settings.getByRole('button', { name: 'Save' }))
  await page.keyboard.press('Enter')
  await expect(settings.getByText('Saved.')).toBeVisible({ timeout: 20_000 })

  const tryIt = page.getByRole('region', { name: 'Try the rules' })
  await tabTo(page, tryIt.getByRole('button', { name: 'Get 1 test ETH' }))
  await page.keyboard.press('Enter')
  await expect(tryIt.getByTestId('security-balance')).toHaveText(/1 ETH/, { timeout: 20_000 })
  await tabTo(page, tryIt.getByRole('button', { name: 'Send 0.2 ETH' }))
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog')
  await tabTo(page, dialog.getByRole('button', { name: 'Confirm' }))
  const signCount = (await authenticator.credentials())[0]!.signCount
  await page.keyboard.press('Enter')

  // Held for a passkey only: no code field, focus on the passkey button; Enter signs with it.
  const passkey = dialog.getByRole('button', { name: 'Use a passkey' })
  await expect(passkey).toBeFocused({ timeout: 20_000 })
  await expect(dialog.getByRole('textbox', { name: 'Authenticator code' })).toHaveCount(0)
  await expect(tryIt.getByTestId('security-sent')).toHaveCount(0)
  await page.keyboard.press('Enter')
  await expect(tryIt.getByTestId('security-sent')).toBeVisible({ timeout: 20_000 })
  expect((await authenticator.credentials())[0]!.signCount).toBeGreaterThan(signCount)
})
