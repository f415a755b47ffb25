import type { Page } from '@playwright/test'
import {
  expect,
  expectNoAxeViolations,
  expectNoHorizontalScroll,
  openPlayground,
  readOtpCode,
  stack,
  test,
  uniqueEmail,
} from './fixtures.ts'
import {
  addressesOf,
  createWallet,
  enterOtp,
  expectSignedIn,
  openSignIn,
  signInDialog,
  signInWithEmail,
} from './flows.ts'

interface SelectMeasure {
  text: string
  /** The width the select takes to show its chosen option whole. */
  needed: number
  width: number
  textOverflow: string
}

/**
 * Runs in the page. A select never scrolls: its `scrollWidth` equals its `clientWidth` however much
 * of its text is cut off. So each select is compared with a hidden copy of itself that holds only
 * the chosen option and takes its natural width.
 */
function measureSelects(selects: HTMLSelectElement[]): SelectMeasure[] {
  return selects.map((select) => {
    const probe = select.cloneNode(true) as HTMLSelectElement
    probe.removeAttribute('id')
    for (const option of [...probe.options]) if (option.value !== select.value) option.remove()
    Object.assign(probe.style, {
      position: 'absolute',
      visibility: 'hidden',
      width: 'max-content',
      minWidth: '0',
      maxWidth: 'none',
    })
    select.after(probe)
    const needed = probe.getBoundingClientRect().width
    probe.remove()
    return {
      text: select.selectedOptions[0]?.text ?? '',
      needed,
      width: select.getBoundingClientRect().width,
      textOverflow: getComputedStyle(select).textOverflow,
    }
  })
}

/**
 * Fails when a select on the page cuts its value off mid-character. An Ethereum-account select
 * must show its (already shortened) address whole; any other select, whose value a person chose
 * (a wallet's name), may end it in an ellipsis.
 */
async function expectSelectsShowTheirValue(page: Page, screen: string) {
  const accounts = await page.getByLabel(/^Ethereum account/).evaluateAll(measureSelects)
  expect(accounts.length, `Ethereum-account selects on "${screen}"`).toBeGreaterThan(0)
  for (const select of accounts) {
    expect(
      select.needed,
      `"${screen}": the Ethereum-account select cuts "${select.text}" off (${Math.ceil(select.needed)}px in ${Math.floor(select.width)}px)`,
    ).toBeLessThanOrEqual(select.width + 0.5)
  }
  for (const select of await page.getByRole('main').locator('select').evaluateAll(measureSelects)) {
    if (select.needed <= select.width + 0.5) continue
    expect(
      select.textOverflow,
      `"${screen}": a select cuts "${select.text}" off (${Math.ceil(select.needed)}px in ${Math.floor(select.width)}px) without an ellipsis`,
    ).toBe('ellipsis')
  }
}

// A narrow and a wide desktop window (no mobile emulation): the dashboard's cards are narrowest
// beside the developer tools at 1440 px, where two selects side by side used to cut the address.
for (const width of [320, 1440]) {
  test.describe(`${width} px window`, () => {
    test.use({ viewport: { width, height: 900 } })

    test('signed in with a wallet: nothing wider than the window, every select shows its value', async ({
      page,
    }) => {
      const at = (screen: string) => `${screen} at ${width} px`
      const email = await signInWithEmail(page, { email: uniqueEmail('alexandra.rodriguez-fernandez') })
      // Sign-in used the code: the dev-inbox toast must not stay over the page with it. (The e2e's
      // tests share one service, so a code another test asks for later may still show: it is news.)
      await expect(
        page
          .getByRole('status')
          .filter({ hasText: /^Dev inbox/ })
          .filter({ hasText: email }),
      ).toBeHidden()
      // A long name, as people give: its select may shorten it, never cut it.
      const wallet = await createWallet(page, 'Everyday spending wallet for the family trip')
      const [address] = await addressesOf(wallet, 'Ethereum')
      const accountSelects = page.getByLabel(/^Ethereum account/)
      await expect(accountSelects).toHaveCount(3)
      for (const select of await accountSelects.all()) await expect(select).toHaveValue(address!)
      await expectNoHorizontalScroll(page, at('dashboard with a wallet'))
      await expectSelectsShowTheirValue(page, at('dashboard with a wallet'))
    })
  })
}

for (const width of [375, 320]) {
  for (const colorScheme of ['light', 'dark'] as const) {
    test.describe(`${width} px, ${colorScheme}`, () => {
      test.use({ viewport: { width, height: 812 }, isMobile: true, hasTouch: true, colorScheme })

      test('sign up, create a wallet and sign, with no screen wider than the phone', async ({ page }) => {
        const at = (screen: string) => `${screen} at ${width} px, ${colorScheme}`
        await openPlayground(page)
        await expect(page.getByRole('button', { name: 'Sign in', exact: true }).first()).toBeVisible()
        await expectNoHorizontalScroll(page, at('landing page'))
        const dialog = await openSignIn(page)
        await expect(dialog.getByLabel('Email address')).toBeVisible()
        await expectNoHorizontalScroll(page, at('sign-in methods'))
        // A long address, as people have: the header must shorten it rather than widen the page.
        const email = uniqueEmail('alexandra.rodriguez-fernandez')
        const since = Date.now()
        await dialog.getByLabel('Email address').fill(email)
        await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
        const code = await readOtpCode(stack.services.default, email, since)
        await expect(dialog.getByRole('heading', { name: 'Enter the code' })).toBeVisible()
        await expectNoHorizontalScroll(page, at('code entry'))
        // The subtitle has the dialog's width below the title, not a narrow column beside "Close".
        const close = await dialog.getByRole('button', { name: 'Close' }).boundingBox()
        const subtitle = await dialog.getByText(/^We sent a 6-digit code to/).boundingBox()
        expect(subtitle!.y).toBeGreaterThanOrEqual(close!.y + close!.height)
        expect(subtitle!.x).toBeLessThan(close!.x)
        await enterOtp(page, code)
        await expect(signInDialog(page).getByRole('button', { name: /^(Not now|Done)$/ })).toBeVisible({
          timeout: 20_000,
        })
        await expectNoHorizontalScroll(page, at('passkey offer'))
        await expectSignedIn(page)
        await expectNoHorizontalScroll(page, at('dashboard after sign-up'))
        const wallet = await createWallet(page, 'Phone')
        await expectNoHorizontalScroll(page, at('dashboard with a wallet'))
        const [address] = await addressesOf(wallet, 'Ethereum')
        const sign = page.getByRole('region', { name: 'Sign', exact: true })
        await sign.getByRole('button', { name: 'Sign message' }).click()
        await expect(sign.getByTestId('signature-verified')).toBeVisible()
        await expect(sign.getByTestId('recovered-signer')).toHaveText(new RegExp(address!, 'i'))
        await expectNoHorizontalScroll(page, at('dashboard after signing'))
        if (width === 375) await expectNoAxeViolations(page, at('dashboard'))
      })
    })
  }
}

for (const width of [375, 320]) {
  test.describe(`${width} px`, () => {
    test.use({ viewport: { width, height: 812 }, isMobile: true, hasTouch: true })

    test('every page of the playground fits the phone, signed in', async ({ page }) => {
      const errors: string[] = []
      page.on('pageerror', (error) => errors.push(error.message))
      await signInWithEmail(page, { email: uniqueEmail('pages') })
      const nav = page.getByRole('navigation', { name: 'Playground' })
      for (const link of await nav.getByRole('link').all()) {
        const name = (await link.textContent())!.trim()
        await link.click()
        await expect(link).toHaveAttribute('aria-current', 'page')
        await page.waitForLoadState('networkidle')
        // A page that crashed is blank, which would fit any screen.
        expect(errors, `errors on the ${name} page`).toEqual([])
        await expect(page.getByRole('main').getByRole('heading').first()).toBeVisible()
        await expectNoHorizontalScroll(page, `the ${name} page at ${width} px`)
      }
    })
  })
}
