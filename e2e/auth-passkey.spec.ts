import { addVirtualAuthenticator, expect, expectNoAxeViolations, openPlayground, test } from './fixtures.ts'
import { expectSignedIn, openSignIn, signOut } from './flows.ts'

test('passkey: sign up with a new passkey, sign out, sign in with it', async ({ page }) => {
  const authenticator = await addVirtualAuthenticator(page)
  await openPlayground(page)
  let dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Continue with a passkey' }).click()
  // No credential exists yet, so the modal offers to create an account with one.
  await dialog
    .getByRole('button', { name: /Create an account with a passkey|Create a passkey/ })
    .first()
    .click()
  const create = dialog.getByRole('button', { name: 'Create a passkey' })
  if (await create.isVisible()) {
    await expectNoAxeViolations(page, 'passkey sign-up')
    await create.click()
  }
  await expectSignedIn(page)
  expect(await authenticator.credentials()).toHaveLength(1)
  const [created] = await authenticator.credentials()
  const profile = page.getByRole('region', { name: 'Profile' })
  await expect(
    profile.getByRole('heading', { name: 'Passkeys' }).or(profile.getByText('Passkeys')),
  ).toBeVisible()
  await expect(profile.getByText('No passkeys yet.')).toHaveCount(0)

  await signOut(page)
  dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Continue with a passkey' }).click()
  await expectSignedIn(page)
  // The sign-in is the passkey's one signature since its creation.
  const [credential] = await authenticator.credentials()
  expect(credential!.signCount).toBe(created!.signCount + 1)
})
