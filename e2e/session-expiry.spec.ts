// An expired session is a state the page shows (not a dashboard whose wallets load forever), and
// signing in again brings the wallet back. The `brief` service issues 5 s sessions; its playground
// client leaves them to expire (no auto-refresh), as on a laptop that slept through the renewal.
import { completeOtpSignIn, createLatchkey, createWallet, startOtpSignIn } from 'latchkey/core'
import {
  expect,
  expectNoAxeViolations,
  openPlayground,
  readOtpCode,
  stack,
  test,
  uniqueEmail,
} from './fixtures.ts'
import {
  completeEmailOtp,
  enterEmailOtp,
  expectSignInModalClosed,
  openSignIn,
  signInDialog,
  walletsCard,
} from './flows.ts'

/**
 * The account and its wallet, made beforehand by a Node client of `latchkey/core` (a 5 s session
 * is too short to also click through a wallet creation reliably on a loaded machine).
 */
async function accountWithWallet(email: string, walletName: string) {
  const service = stack.services.brief
  const client = createLatchkey({
    authProxyUrl: service.authProxyUrl,
    baseUrl: service.baseUrl,
    authProxyConfigId: service.authProxyConfigId,
    organizationId: service.organizationId,
    keyStore: 'memory',
    // The auth proxy answers only its allowed origin: the playground's, as a page there would send.
    fetch: (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set('origin', new URL(stack.playgroundUrl).origin)
      return fetch(input, { ...init, headers })
    },
    storage: null,
    session: { autoRefresh: false },
  })
  try {
    const since = Date.now()
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
    const otpCode = await readOtpCode(service, email, since)
    await completeOtpSignIn(client, { ...started, otpCode })
    await createWallet(client, { walletName, chains: ['ethereum'] })
  } finally {
    client.destroy()
  }
}

test('a 5 s session expires into a visible state, and signing in again restores the wallet', async ({
  page,
}) => {
  const email = uniqueEmail('expiry')
  await accountWithWallet(email, 'Kept wallet')

  await openPlayground(page, 'brief')
  await openSignIn(page)
  await enterEmailOtp(page, email, 'brief')
  // Not `expectSignedIn`: the dashboard may never show. The JWT's `exp` is its whole-second `iat`
  // plus 5, so the session has 2.5–4.5 s left when the page reads the login's answer, and the modal
  // closes only once the dashboard's reads have been fetched again: on a loaded machine that took
  // 5.7 s, and the session had ended behind the open modal. The expired state below, which names
  // the account, is what shows this sign-in worked.
  await expectSignInModalClosed(page)
  const header = page.getByRole('banner')

  // At the expiry instant (no reload, no click): the page says so, everywhere.
  const expired = page.getByRole('region', { name: 'Session expired' })
  await expect(expired).toBeVisible({ timeout: 15_000 })
  await expect(expired.getByText(email)).toBeVisible()
  await expect(header.getByText('Session expired')).toBeVisible()
  // No green "signed in" chip, no "Sign out", no wallet list spinning on a session that cannot sign.
  await expect(header.getByText(email)).toHaveCount(0)
  await expect(header.getByRole('button', { name: 'Sign out' })).toHaveCount(0)
  await expect(walletsCard(page)).toHaveCount(0)
  await expectNoAxeViolations(page, 'expired session')

  // Signing in again asks for a 5-minute session (a login names its lifetime and the service grants
  // it; the page itself asks for the service's 5 s), so the dashboard and the wallet are checked
  // without racing a second 5 s expiry.
  let longerLogins = 0
  await page.route('**/v1/otp_login', async (route) => {
    longerLogins += 1
    await route.continue({
      postData: JSON.stringify({ ...route.request().postDataJSON(), expirationSeconds: '300' }),
    })
  })

  // Signing in again: the modal says why it is back, and the wallet is there again.
  await header.getByRole('button', { name: 'Sign in again' }).click()
  const dialog = signInDialog(page)
  await expect(dialog.getByText('Session expired — sign in again')).toBeVisible()
  await completeEmailOtp(page, email, 'brief')
  await expect(walletsCard(page).getByRole('article', { name: 'Kept wallet' })).toBeVisible()
  await expect(header.getByText(email)).toBeVisible()
  await expect(expired).toHaveCount(0)
  expect(longerLogins).toBe(1)
})
