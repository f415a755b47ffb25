import type { Page } from '@playwright/test'
import {
  addVirtualAuthenticator,
  expect,
  expectNoAxeViolations,
  openPlayground,
  test,
  uniqueEmail,
} from './fixtures.ts'
import { expectSignedIn, openSignIn, signInWithEmail, signOut } from './flows.ts'

// Issue 38: <LinkedLogins/> on the playground's dashboard, keyboard only, with a virtual authenticator.
test('linked logins: the last way in is refused, a passkey is linked, the e-mail unlinked, then the passkey is the last', async ({
  page,
}) => {
  const authenticator = await addVirtualAuthenticator(page)
  await openPlayground(page)
  const email = await signInWithEmail(page, { open: false })
  const logins = page.getByRole('region', { name: 'Ways to sign in' })
  await expect(logins.getByText(email)).toBeVisible()

  await logins.getByRole('button', { name: `Unlink ${email}` }).focus()
  await page.keyboard.press('Enter')
  await expect(logins.getByRole('button', { name: 'Yes, unlink' })).toBeFocused()
  await expectNoAxeViolations(page, 'linked logins: confirming')
  await page.keyboard.press('Enter')
  await expect(logins.getByText(/This is your last way to sign in/)).toBeVisible()

  await logins.getByRole('button', { name: 'Add passkey' }).click()
  await expect(logins.getByText('Passkey is linked.')).toBeVisible()
  expect(await authenticator.credentials()).toHaveLength(1)
  await logins.getByRole('button', { name: `Unlink ${email}` }).click()
  await logins.getByRole('button', { name: 'Yes, unlink' }).click()
  await expect(logins.getByText(`${email} is unlinked.`)).toBeFocused()
  await expect(logins.getByRole('listitem')).toHaveCount(1)

  await logins.getByRole('button', { name: /^Unlink Passkey / }).click()
  await logins.getByRole('button', { name: 'Yes, unlink' }).click()
  await expect(logins.getByText(/This is your last way to sign in/)).toBeVisible()
  await expect(logins.getByRole('listitem')).toHaveCount(1)
  await expectNoAxeViolations(page, 'linked logins: refused')
})

/**
 * The dev identity provider's page in the popup `press` opens, standing in for Google: signs in as
 * `email`, keyboard only. The page closes the popup once it has read the redirect.
 */
async function consentInPopup(page: Page, press: () => Promise<void>, email: string) {
  const popupPromise = page.waitForEvent('popup')
  await press()
  const popup = await popupPromise
  await popup.waitForLoadState()
  await popup.getByLabel('E-mail').fill(email)
  await popup.getByLabel('Name').fill('Grace Hopper')
  const closed = popup.waitForEvent('close', { timeout: 30_000 })
  await popup.getByRole('button', { name: 'Continue' }).focus()
  await popup.keyboard.press('Enter')
  await closed
}

// Issue 38: an e-mail account links Google from <LinkedLogins/> (the dev identity provider stands in
// for Google), signing in with Google then reaches the same account, and Google is unlinked.
test('linked logins: an e-mail account links Google, Google signs in to it, then Google is unlinked (keyboard, 320 px)', async ({
  page,
}) => {
  await page.setViewportSize({ width: 320, height: 720 })
  await openPlayground(page)
  const email = await signInWithEmail(page, { open: false })
  const google = uniqueEmail('google')
  const logins = page.getByRole('region', { name: 'Ways to sign in' })
  await expect(logins.getByText(email)).toBeVisible()

  const link = logins.getByRole('button', { name: 'Link Google', exact: true })
  await consentInPopup(
    page,
    async () => {
      await link.focus()
      await page.keyboard.press('Enter')
    },
    google,
  )
  await expect(logins.getByText('Google is linked.')).toBeFocused({ timeout: 20_000 })
  await expect(logins.getByRole('listitem')).toHaveCount(2)
  await expect(logins.getByRole('button', { name: 'Unlink Google' })).toBeVisible()
  await expect(link).toHaveCount(0)
  await expectNoAxeViolations(page, 'linked logins: Google linked')
  const { scrollWidth, width } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    width: document.documentElement.clientWidth,
  }))
  expect(scrollWidth, 'the linked logins scroll sideways at 320 px').toBeLessThanOrEqual(width)

  // Signing in with Google reaches the same account: its e-mail is among its ways in.
  await signOut(page)
  const dialog = await openSignIn(page)
  await consentInPopup(
    page,
    async () => {
      await dialog.getByRole('button', { name: 'Continue with Google' }).focus()
      await page.keyboard.press('Enter')
    },
    google,
  )
  await expectSignedIn(page)
  await expect(logins.getByText(email)).toBeVisible()
  await expect(logins.getByRole('listitem')).toHaveCount(2)

  // Unlink Google, keyboard only: the e-mail stays the way in.
  await logins.getByRole('button', { name: 'Unlink Google' }).focus()
  await page.keyboard.press('Enter')
  await expect(logins.getByRole('button', { name: 'Yes, unlink' })).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(logins.getByText('Google is unlinked.')).toBeFocused()
  await expect(logins.getByRole('listitem')).toHaveCount(1)
  await expect(logins.getByRole('button', { name: 'Link Google', exact: true })).toBeVisible()
  await expectNoAxeViolations(page, 'linked logins: Google unlinked')
})
