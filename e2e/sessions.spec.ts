import {
  addVirtualAuthenticator,
  expect,
  expectFitsPhone,
  expectNoAxeViolations,
  openPlayground,
  stack,
  test,
  uniqueEmail,
} from './fixtures.ts'
import {
  completeEmailOtp,
  createWallet,
  expectSignedIn,
  openSignIn,
  signInWithEmail,
  signOut,
} from './flows.ts'

test('two sessions in one browser, and a switch between them', async ({ page }) => {
  const alice = await signInWithEmail(page, { email: uniqueEmail('alice') })
  await createWallet(page, 'Alice wallet')

  const sessions = page.getByRole('region', { name: 'Sessions in this browser' })
  await sessions.getByRole('button', { name: 'Add another account' }).click()
  const bob = uniqueEmail('bob')
  await completeEmailOtp(page, bob)
  await expect(sessions.getByRole('listitem')).toHaveCount(2)
  // The new session is the active one: Bob's profile, none of Alice's wallets.
  const profile = page.getByRole('region', { name: 'Profile' })
  await expect(profile.getByText(bob).first()).toBeVisible()
  await expect(page.getByText('No wallets yet')).toBeVisible()

  await sessions.getByRole('button', { name: `Switch to ${alice}` }).click()
  await expect(profile.getByText(alice).first()).toBeVisible()
  await expect(page.getByRole('article', { name: 'Alice wallet' })).toBeVisible()
  await expect(sessions.getByRole('button', { name: `Switch to ${bob}` })).toBeVisible()
  await expectFitsPhone(page, 'the sessions page after the test')
})

test('sign-out revokes the session key on the service', async ({ page }) => {
  // A passkey account: its passkey stays as its credential once the session key is gone.
  await addVirtualAuthenticator(page)
  // Keep one signed request the page made with its session key, to replay it later.
  let captured: { url: string; body: string; stamp: string } | undefined
  page.on('request', (request) => {
    const stamp = request.headers()['x-stamp']
    if (!captured && stamp && request.url().includes('/public/v1/query/'))
      captured = { url: request.url(), body: request.postData() ?? '', stamp }
  })
  await openPlayground(page)
  const dialog = await openSignIn(page)
  await dialog.getByRole('button', { name: 'Continue with a passkey' }).click()
  await dialog
    .getByRole('button', { name: /Create an account with a passkey|Create a passkey/ })
    .first()
    .click()
  const create = dialog.getByRole('button', { name: 'Create a passkey' })
  if (await create.isVisible()) await create.click()
  await expectSignedIn(page)
  await expect.poll(() => captured !== undefined).toBe(true)
  const replay = () =>
    fetch(captured!.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Stamp': captured!.stamp },
      body: captured!.body,
    })
  expect((await replay()).status).toBe(200)

  const revoked = page.waitForResponse((r) => r.url().endsWith('/public/v1/submit/delete_api_keys'))
  await signOut(page)
  expect((await revoked).status()).toBe(200)
  const refused = await replay()
  expect(refused.status).toBe(401)
  expect(((await refused.json()) as { message: string }).message).toContain(
    'could not find public key in organization or its parent organization',
  )
})

test('sign-out of an e-mail OTP account revokes its session key too', async ({ page }) => {
  // The session key is such an account's only API key; the e-mail still lets the person back in.
  let captured: { url: string; body: string; stamp: string } | undefined
  page.on('request', (request) => {
    const stamp = request.headers()['x-stamp']
    if (!captured && stamp && request.url().includes('/public/v1/query/'))
      captured = { url: request.url(), body: request.postData() ?? '', stamp }
  })
  await signInWithEmail(page)
  await expect.poll(() => captured !== undefined).toBe(true)
  const replay = () =>
    fetch(captured!.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Stamp': captured!.stamp },
      body: captured!.body,
    })
  expect((await replay()).status).toBe(200)
  const revoked = page.waitForResponse((r) => r.url().endsWith('/public/v1/submit/delete_api_keys'))
  await signOut(page)
  expect((await revoked).status()).toBe(200)
  expect((await replay()).status).toBe(401)
})

test('a short session warns, refreshes on request, then expires', async ({ page }) => {
  test.setTimeout(120_000)
  await signInWithEmail(page, { service: 'short' })
  expect(stack.services.short).toBeDefined()
  const signedIn = page.getByRole('region', { name: 'Signed in' })
  await expect(signedIn).toBeVisible()

  // 20 s sessions, warned 10 s before the end.
  const ending = page.getByRole('region', { name: 'Session ending soon' })
  await expect(ending).toBeVisible({ timeout: 20_000 })
  await ending.getByRole('button', { name: 'Stay signed in' }).click()
  await expect(signedIn).toBeVisible()
  await expect(signedIn.getByText(/Ends in 0:1\d/)).toBeVisible()
  // The refreshed session works: it can create a wallet.
  await createWallet(page, 'After refresh')

  // Left alone, it expires, and the page says so and offers to sign in again.
  const expired = page.getByRole('region', { name: 'Session expired' })
  await expect(expired).toBeVisible({ timeout: 30_000 })
  await expectNoAxeViolations(page, 'session expired')
  await expired.getByRole('button', { name: 'Sign in again' }).click()
  await expect(page.getByRole('dialog')).toBeVisible()
})
