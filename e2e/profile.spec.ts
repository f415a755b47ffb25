import { expect, expectNoAxeViolations, test } from './fixtures.ts'
import { signInWithEmail } from './flows.ts'

test('profile: rename the user; the new name is what the service returns after a reload', async ({
  page,
}) => {
  await signInWithEmail(page)
  const profile = page.getByRole('region', { name: 'Profile' })
  const name = profile.getByLabel('Name')
  await name.fill('Ada Lovelace')
  await profile.getByRole('button', { name: 'Save' }).click()
  await expect(profile.getByText('Name saved.')).toBeVisible()
  await expectNoAxeViolations(page, 'profile')

  await page.reload()
  await expect(page.getByRole('region', { name: 'Profile' }).getByLabel('Name')).toHaveValue('Ada Lovelace')
})
