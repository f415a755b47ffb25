import { expect, expectNoAxeViolations, openPlayground, test, uniqueEmail } from './fixtures.ts'
import { expectSignedIn, openSignIn } from './flows.ts'

test('OAuth: "Continue with Google" signs up through the dev identity provider in a popup', async ({
  page,
}) => {
  await openPlayground(page)
  const email = uniqueEmail('oauth')
  const dialog = await openSignIn(page)
  const popupPromise = page.waitForEvent('popup')
  await dialog.getByRole('button', { name: 'Continue with Google' }).click()
  const popup = await popupPromise
  await popup.waitForLoadState()
  await expect(dialog.getByRole('heading', { name: 'Continue with Google' })).toBeVisible()
  await expectNoAxeViolations(page, 'OAuth in progress')
  // The dev IdP's own authorize page: a person types who to sign in as.
  await popup.getByLabel('E-mail').fill(email)
  await popup.getByLabel('Name').fill('Ada Lovelace')
  // The client closes the popup once it has read the redirect, which can happen before the click
  // returns: listen first.
  const closed = popup.waitForEvent('close', { timeout: 30_000 })
  await popup.getByRole('button', { name: 'Continue' }).click()
  await closed
  await expectSignedIn(page)
  const profile = page.getByRole('region', { name: 'Profile' })
  await expect(profile.getByText(email).first()).toBeVisible()
})
