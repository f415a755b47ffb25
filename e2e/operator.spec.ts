import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, WEBHOOK_JWKS_PATH } from '@latchkey/protocol'
import { expect, expectFitsPhone, expectNoAxeViolations, openPlayground, stack, test } from './fixtures.ts'
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
  // A ceiling on sessions below the one a sign-in gets is refused, saying why; one above it is kept.
  await form.getByLabel('Longest session (seconds)').fill('600')
  await form.getByRole('button', { name: 'Save settings' }).click()
  await expect(form.getByText(/longer than the longest allowed \(600 s\)/)).toBeVisible()
  await form.getByLabel('Longest session (seconds)').fill('3600')
  await form.getByRole('button', { name: 'Save settings' }).click()
  await expect(form.getByText('Saved')).toBeVisible()
  await expect(form.getByLabel('Longest session (seconds)')).toHaveValue('3600')

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
  await form.getByLabel('Longest session (seconds)').fill('2592000')
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

test('operator: an endpoint added on the Webhooks section gets signed deliveries; the page shows each with the exact request, which the verifier accepts', async ({
  page,
}) => {
  // A loopback receiver this test runs (the dev service allows loopback receivers).
  const received: { headers: IncomingHttpHeaders; body: Buffer }[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks) })
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  try {
    await openPlayground(page, 'operator', '/operator')
    const panel = page.getByRole('region', { name: 'Webhooks' })
    await panel.getByLabel('Receiver URL').fill(url)
    await panel.getByLabel('Name').fill('e2e receiver')
    await panel.getByRole('button', { name: 'Add endpoint' }).click()
    await expect(panel.getByRole('list', { name: 'Webhook endpoints' })).toContainText('e2e receiver')
    // Its own creation is an ACTIVITY_UPDATES event, and pausing and resuming it are two more.
    await panel.getByRole('button', { name: 'Pause e2e receiver' }).click()
    await panel.getByRole('button', { name: 'Resume e2e receiver' }).click()
    await expect.poll(() => received.length, { timeout: 30_000 }).toBeGreaterThan(0)
    const jwks = await (await fetch(`${service.baseUrl}${WEBHOOK_JWKS_PATH}`)).json()
    const first = received[0]!
    expect(verifyWebhook({ body: first.body, headers: first.headers, jwks }).ok).toBe(true)
    const eventId = String(first.headers['x-turnkey-event-id'])

    // The page lists the delivery: event, id, attempt, outcome, and the request as it was signed.
    const deliveries = panel.getByRole('list', { name: 'Recent deliveries' })
    await expect
      .poll(
        async () => {
          await panel.getByRole('button', { name: 'Refresh' }).click()
          return deliveries.getByRole('listitem').filter({ hasText: eventId }).count()
        },
        { timeout: 30_000 },
      )
      .toBeGreaterThan(0)
    const item = deliveries.getByRole('listitem').filter({ hasText: eventId }).first()
    await expect(item).toContainText('delivered · 200')
    await item.getByText('Signed request').click()
    const shown = (await item.locator('pre').textContent()) ?? ''
    const blank = shown.indexOf('\n\n')
    const [requestLine, ...headerLines] = shown.slice(0, blank).split('\n')
    expect(requestLine).toBe(`POST ${url}`)
    const headers = Object.fromEntries(
      headerLines.map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
    )
    const body = shown.slice(blank + 2)
    expect(body).toBe(first.body.toString('utf8'))
    expect(headers['x-turnkey-signature']).toBeTruthy()
    expect(verifyWebhook({ body: new TextEncoder().encode(body), headers, jwks }).ok).toBe(true)
    await expectNoAxeViolations(page, 'operator webhooks')

    // Redeliver: the same event again, under the same id.
    const before = received.length
    await item.getByRole('button', { name: /^Redeliver/ }).click()
    await expect
      .poll(() => received.slice(before).some((r) => r.headers['x-turnkey-event-id'] === eventId), {
        timeout: 30_000,
      })
      .toBe(true)
    await panel.getByRole('button', { name: 'Delete e2e receiver' }).click()
    await expect(panel.getByRole('list', { name: 'Webhook endpoints' })).toHaveCount(0)
  } finally {
    await new Promise((done) => server.close(done))
  }
  await expectFitsPhone(page, 'the operator page after the test')
})
