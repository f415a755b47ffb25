import {
  expect,
  expectNoAxeViolations,
  openPlayground,
  readOtpCode,
  stack,
  test,
  uniquePhone,
} from './fixtures.ts'
import { enterOtp, expectSignedIn, openSignIn } from './flows.ts'

test('SMS OTP: a phone number with a country selection signs up', async ({ page }) => {
  await openPlayground(page)
  const phone = uniquePhone()
  const dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Use phone number instead' }).click()
  await dialog.getByLabel('Country or region').selectOption('US')
  await dialog.getByLabel('Phone number').fill(phone.national)
  await expectNoAxeViolations(page, 'phone entry')
  const since = Date.now()
  await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
  // The code went to the E.164 form of what was typed.
  const code = await readOtpCode(stack.services.default, phone.e164, since)
  await expect(dialog.getByText(phone.e164)).toBeVisible()
  await enterOtp(page, code)
  await expectSignedIn(page)
  await expect(page.getByRole('region', { name: 'Profile' }).getByText(phone.e164).first()).toBeVisible()
})
