import { expect, expectNoAxeViolations, injectEthereumWallet, openPlayground, test } from './fixtures.ts'
import { expectSignedIn, openSignIn, signOut } from './flows.ts'

test('external wallet: an EIP-6963 wallet with a real key signs up, then signs in again', async ({
  page,
}) => {
  const wallet = await injectEthereumWallet(page)
  await openPlayground(page)
  let dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Continue with a wallet' }).click()
  await expect(dialog.getByRole('heading', { name: 'Choose a wallet' })).toBeVisible()
  await expectNoAxeViolations(page, 'wallet choice')
  await dialog.getByRole('button', { name: /E2E Wallet/ }).click()
  await expectSignedIn(page)
  // The wallet was asked for personal_sign (the EIP-191 stamp), with this account.
  expect(wallet.requests.filter((r) => r.method === 'personal_sign').length).toBeGreaterThan(0)
  await expect(
    page.getByText(wallet.address, { exact: false }).or(page.getByText(wallet.address.toLowerCase())).first(),
  ).toBeVisible()

  await signOut(page)
  const signs = wallet.requests.length
  dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Continue with a wallet' }).click()
  await dialog.getByRole('button', { name: /E2E Wallet/ }).click()
  await expectSignedIn(page)
  expect(wallet.requests.length).toBeGreaterThan(signs)
})
