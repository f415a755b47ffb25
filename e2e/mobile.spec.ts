import { expect, expectNoAxeViolations, test } from './fixtures.ts'
import { addressesOf, createWallet, signInWithEmail } from './flows.ts'

test.use({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true })

const noHorizontalScroll = (page: import('@playwright/test').Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)

test('375 px wide: sign up, create a wallet and sign, with nothing wider than the screen', async ({
  page,
}) => {
  await signInWithEmail(page)
  expect(await noHorizontalScroll(page)).toBe(true)
  const wallet = await createWallet(page, 'Phone')
  const [address] = await addressesOf(wallet, 'Ethereum')
  const sign = page.getByRole('region', { name: 'Sign', exact: true })
  await sign.getByRole('button', { name: 'Sign message' }).click()
  await expect(sign.getByTestId('signature-verified')).toBeVisible()
  await expect(sign.getByTestId('recovered-signer')).toHaveText(new RegExp(address!, 'i'))
  expect(await noHorizontalScroll(page)).toBe(true)
  await expectNoAxeViolations(page, 'dashboard at 375 px')
})
