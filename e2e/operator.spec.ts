import { expect, expectNoAxeViolations, openPlayground, stack, test } from './fixtures.ts'
import { openSignIn } from './flows.ts'

const service = stack.services.operator

async function walletKitConfig() {
  const response = await fetch(`${service.authProxyUrl}/v1/wallet_kit_config`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'X-Auth-Proxy-Config-Id': service.authProxyConfigId,
      // The proxy checks the caller's origin; answer as the playground would.
      origin: new URL(stack.playgroundUrl).origin,
    },
    body: '{}',
  })
  return (await response.json()) as { enabledProviders: string[]; sessionExpirationSeconds: string }
}

test('operator: disabling sign-in methods removes them from the modal; the proxy switch turns sign-in off', async ({
  page,
}) => {
  await openPlayground(page, 'operator', '/operator')
  const form = page.getByRole('form', { name: 'Authentication settings' })
  await expect(form.getByLabel('SMS code')).toBeVisible()
  await expectNoAxeViolations(page, 'operator settings')

  // Before: the modal offers SMS and Facebook.
  await openPlayground(page, 'operator')
  let dialog = await openSignIn(page)
  await expect(dialog.getByRole('button', { name: 'Use phone number instead' })).toBeVisible()
  await expect(dialog.getByRole('button', { name: 'Continue with Facebook' })).toBeVisible()

  await openPlayground(page, 'operator', '/operator')
  await form.getByLabel('SMS code').uncheck()
  await form.getByLabel('Facebook').uncheck()
  await form.getByLabel('Session expiration (seconds)').fill('1200')
  await form.getByLabel('E-mail subject').fill('Your playground code')
  await form.getByRole('button', { name: 'Save settings' }).click()
  await expect(form.getByText('Saved')).toBeVisible()
  const config = await walletKitConfig()
  expect(config.enabledProviders).not.toContain('sms')
  expect(config.enabledProviders).not.toContain('facebook')
  expect(config.enabledProviders).toContain('email')
  expect(config.sessionExpirationSeconds).toBe('1200')

  // After: the modal stops offering them; the rest is still there.
  await openPlayground(page, 'operator')
  dialog = await openSignIn(page)
  await expect(dialog.getByLabel('Email address')).toBeVisible()
  await expect(dialog.getByRole('button', { name: 'Continue with Google' })).toBeVisible()
  await expect(dialog.getByRole('button', { name: 'Use phone number instead' })).toHaveCount(0)
  await expect(dialog.getByRole('button', { name: 'Continue with Facebook' })).toHaveCount(0)

  // Switching the proxy off: the modal says sign-in is off instead of showing a broken form.
  await openPlayground(page, 'operator', '/operator')
  await form.getByLabel('Auth proxy enabled').uncheck()
  await form.getByRole('button', { name: 'Save settings' }).click()
  await expect(form.getByText('Saved')).toBeVisible()
  await openPlayground(page, 'operator')
  dialog = await openSignIn(page)
  await expect(dialog.getByText('Sign-in is switched off for this app. Try again later.')).toBeVisible()
  await expectNoAxeViolations(page, 'sign-in switched off')

  await openPlayground(page, 'operator', '/operator')
  await form.getByLabel('Auth proxy enabled').check()
  await form.getByLabel('SMS code').check()
  await form.getByLabel('Facebook').check()
  await form.getByRole('button', { name: 'Save settings' }).click()
  await expect(form.getByText('Saved')).toBeVisible()
  expect((await walletKitConfig()).enabledProviders).toContain('sms')
})

test('a page on an origin the proxy does not allow is refused, and the modal shows an error instead of a form', async ({
  page,
}) => {
  // The same playground opened on 127.0.0.1: the default service allows only its localhost origin.
  const foreign = new URL(stack.foreignPlaygroundUrl).origin
  const { authProxyUrl, authProxyConfigId } = stack.services.default
  const refusal = await fetch(`${authProxyUrl}/v1/wallet_kit_config`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'X-Auth-Proxy-Config-Id': authProxyConfigId,
      origin: foreign,
    },
    body: '{}',
  })
  expect(refusal.status).toBe(403)
  expect(refusal.headers.get('access-control-allow-origin')).toBeNull()
  expect(((await refusal.json()) as { details: { errorCode: string } }).details.errorCode).toBe(
    'ORIGIN_NOT_ALLOWED',
  )

  await page.goto(stack.foreignPlaygroundUrl)
  const dialog = await openSignIn(page)
  await expect(dialog.getByRole('alert')).toContainText('We couldn’t load the sign-in options.')
  await expect(dialog.getByLabel('Email address')).toHaveCount(0)
  await expectNoAxeViolations(page, 'sign-in unavailable')
})
