import {
  expect,
  expectNoAxeViolations,
  openPlayground,
  readOtpCode,
  stack,
  test,
  uniqueEmail,
} from './fixtures.ts'
import { enterOtp, expectSignedIn, openSignIn, signInWithEmail, signOut } from './flows.ts'

test('e-mail OTP: a new address signs up, then the same address signs in again', async ({ page }) => {
  await openPlayground(page)
  await expectNoAxeViolations(page, 'landing')
  const email = uniqueEmail('otp')

  const dialog = await openSignIn(page)
  await expectNoAxeViolations(page, 'sign-in methods')
  const since = Date.now()
  await dialog.getByLabel('Email address').fill(email)
  await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
  await expect(dialog.getByRole('heading', { name: 'Enter the code' })).toBeVisible()
  await expectNoAxeViolations(page, 'OTP code entry')
  await enterOtp(page, await readOtpCode(stack.services.default, email, since))
  await expectSignedIn(page)
  await expect(page.getByRole('region', { name: 'Profile' }).getByText(email).first()).toBeVisible()
  await expectNoAxeViolations(page, 'dashboard')

  await signOut(page)
  await signInWithEmail(page, { email, open: false })
  // Signing in again reaches the same user: the profile still shows the address it signed up with.
  await expect(page.getByRole('region', { name: 'Profile' }).getByText(email).first()).toBeVisible()
})

test('e-mail OTP: a wrong code is refused with a clear error and the right one still works', async ({
  page,
}) => {
  await openPlayground(page)
  const email = uniqueEmail('wrong')
  const dialog = await openSignIn(page)
  const since = Date.now()
  await dialog.getByLabel('Email address').fill(email)
  await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
  const code = await readOtpCode(stack.services.default, email, since)
  const wrong = code === '000000' ? '111111' : '000000'
  await enterOtp(page, wrong)
  await expect(dialog.getByText('That code isn’t right. Check it and try again.')).toBeVisible()
  await enterOtp(page, code)
  await expectSignedIn(page)
})
