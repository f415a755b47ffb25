import {
  expect,
  expectNoAxeViolations,
  openPlayground,
  readOtpCode,
  stack,
  test,
  uniqueEmail,
} from './fixtures.ts'

/** Presses Tab until `name` (an accessible name) has focus; fails after `max` presses. */
async function tabTo(page: import('@playwright/test').Page, name: RegExp, max = 25) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab')
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null
      return el ? (el.getAttribute('aria-label') ?? el.textContent ?? '').trim() : ''
    })
    if (name.test(focused)) return
  }
  throw new Error(`${name} never received focus`)
}

test('keyboard only: sign up with e-mail without touching the mouse', async ({ page }) => {
  await openPlayground(page)
  const email = uniqueEmail('keys')
  await tabTo(page, /^Sign in$/)
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog')
  await expect(dialog).toBeVisible()
  // Focus moved into the dialog, onto its first field.
  await expect(dialog.getByLabel('Email address')).toBeFocused()
  const since = Date.now()
  await page.keyboard.type(email)
  await page.keyboard.press('Enter')
  const code = await readOtpCode(stack.services.default, email, since)
  await expect(dialog.getByRole('textbox', { name: /^Digit 1 of/ })).toBeFocused()
  await page.keyboard.type(code)
  // New account: the passkey offer, then success; each finished from the keyboard.
  const finish = dialog.getByRole('button', { name: /^(Not now|Done)$/ })
  // (The modal may re-render between steps, so "no dialog" only counts once no step shows up.)
  for (let round = 0; round < 8; round++) {
    const shown = await finish.waitFor({ state: 'visible', timeout: 4000 }).then(
      () => true,
      () => false,
    )
    if (!shown) {
      if ((await dialog.count()) === 0) break
      continue
    }
    const label = (await finish.textContent())!.trim()
    await expectNoAxeViolations(page, label === 'Done' ? 'sign-in success' : 'passkey offer')
    await tabTo(page, new RegExp(`^${label}$`), 10)
    await page.keyboard.press('Enter')
    await expect(dialog.getByRole('button', { name: label, exact: true })).toHaveCount(0)
  }
  await expect(dialog).toHaveCount(0)
  await expect(page.getByRole('heading', { name: 'Sessions in this browser' })).toBeVisible()
  // Escape closes a dialog and focus returns to where it was.
  await tabTo(page, /^Add another account$/, 60)
  await page.keyboard.press('Enter')
  await expect(page.getByRole('dialog')).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(page.getByRole('dialog')).toHaveCount(0)
  await expect(page.getByRole('button', { name: 'Add another account' })).toBeFocused()
})
