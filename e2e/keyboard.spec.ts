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

/** Focus is inside the open dialog (not on `<body>` behind it). */
const focusInDialog = (page: import('@playwright/test').Page) =>
  page.evaluate(() => {
    const dialog = document.querySelector('dialog[open]')
    return !!dialog && dialog.contains(document.activeElement) && document.activeElement !== dialog
  })

test('keyboard only: sign up with e-mail without touching the mouse', async ({ page }) => {
  await openPlayground(page)
  const email = uniqueEmail('keys')
  await tabTo(page, /^Sign in$/)
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog')
  await expect(dialog).toBeVisible()
  // Each step of the flow takes focus (WAI-ARIA dialog pattern): first the e-mail field.
  await expect(dialog.getByLabel('Email address')).toBeFocused()
  const since = Date.now()
  await page.keyboard.type(email)
  await page.keyboard.press('Enter')
  const code = await readOtpCode(stack.services.default, email, since)
  // The code step: its first digit.
  await expect(dialog.getByRole('textbox', { name: /^Digit 1 of/ })).toBeFocused()
  expect(await focusInDialog(page)).toBe(true)
  await page.keyboard.type(code)
  // A new account: the passkey offer takes focus on "Not now" (described by the offer's text; a
  // stray Enter starts no passkey ceremony), not <body> behind the dialog.
  const offer = dialog.getByRole('heading', { name: 'Sign in faster next time' })
  await expect(offer).toBeVisible({ timeout: 20_000 })
  const notNow = dialog.getByRole('button', { name: 'Not now', exact: true })
  await expect(notNow).toBeFocused()
  await expect(notNow).toHaveAccessibleDescription(/Add a passkey to this account/)
  expect(await focusInDialog(page)).toBe(true)
  await expectNoAxeViolations(page, 'passkey offer')
  // Answering the offer ends the flow: the modal closes itself (no "ready" step to dismiss).
  await page.keyboard.press('Enter')
  await expect(dialog).toHaveCount(0)
  // "Sign in" is gone from the header: focus lands on the page's content, not <body>.
  await expect(page.locator('#main')).toBeFocused()
  await expect(page.getByRole('heading', { name: 'Sessions in this browser' })).toBeVisible()
  // Escape closes a dialog and focus returns to where it was.
  await tabTo(page, /^Add another account$/, 60)
  await page.keyboard.press('Enter')
  await expect(page.getByRole('dialog')).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(page.getByRole('dialog')).toHaveCount(0)
  await expect(page.getByRole('button', { name: 'Add another account' })).toBeFocused()
})
