import { addVirtualAuthenticator, expect, expectNoAxeViolations, openPlayground, test } from './fixtures.ts'
import { signInWithEmail } from './flows.ts'

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
