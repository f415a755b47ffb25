// The playground's own face: one sign-out control, sessions listed once, networks by name, and an
// address shortened once on a phone.
import { expect, test, uniqueEmail } from './fixtures.ts'
import { createWallet, signInWithEmail, signOut, walletsCard } from './flows.ts'

test('the dashboard has one "Sign out", lists the sessions once and names the network', async ({ page }) => {
  await signInWithEmail(page, { email: uniqueEmail('face') })
  await createWallet(page)

  // Not a header "Sign out" plus a card's "Log out" plus the profile's per-session "Log out".
  await expect(page.getByRole('button', { name: /sign out|log out/i })).toHaveCount(1)
  await expect(page.getByText(/log out/i)).toHaveCount(0)
  // "Sessions in this browser" is the list; the profile does not repeat it as "Active sessions".
  await expect(page.getByRole('heading', { name: 'Sessions in this browser' })).toBeVisible()
  await expect(page.getByRole('region', { name: 'Profile' })).toBeVisible()
  await expect(page.getByText('Active sessions')).toHaveCount(0)

  // The local node by its name, not as eip155:31337.
  await expect(page.getByTestId('send-network')).toHaveText('Local (anvil)')
  await expect(page.getByTestId('stack-network')).toHaveText('Local (anvil)')
  await expect(page.getByText(/eip155:/)).toHaveCount(0)

  await signOut(page)
})

test.describe('375 px', () => {
  test.use({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true })

  test('a wallet’s addresses are shortened once, not cut again at their end', async ({ page }) => {
    await signInWithEmail(page, { email: uniqueEmail('narrow') })
    const wallet = await createWallet(page)
    const shown = walletsCard(page).locator('.lk-address')
    await expect(shown).toHaveCount(2)
    for (const address of await wallet.locator('.lk-address').all()) {
      const text = (await address.locator('[aria-hidden="true"]').textContent())!
      expect(text).toMatch(/^\S{6,8}…\S{6}$/)
      // The whole shortened form fits its box: no ellipsis after the middle one.
      const clipped = await address.evaluate((el) => el.scrollWidth > el.clientWidth)
      expect(clipped, `${text} is cut`).toBe(false)
      await expect(address).toBeInViewport({ ratio: 1 })
    }
  })
})
