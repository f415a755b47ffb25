import { render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LatchkeyConfigParameter } from '../core/createLatchkey.ts'
import { ConfigInvalidError } from '../core/errors.ts'
import { LatchkeyProvider } from './LatchkeyProvider.tsx'

// A config as an app with an unset env variable hands it over (the type error silenced on purpose).
const unset = {
  authProxyUrl: undefined,
  baseUrl: 'http://127.0.0.1:8787',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
} as unknown as LatchkeyConfigParameter

describe('<LatchkeyProvider> with an invalid config', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
    vi.restoreAllMocks()
  })

  it('renders a panel naming the option and the fix in place of the app in development, and warns in the console', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    render(
      <LatchkeyProvider config={unset}>
        <p>the app</p>
      </LatchkeyProvider>,
    )
    const panel = screen.getByRole('alert')
    expect(screen.queryByText('the app')).toBeNull()
    expect(panel.querySelector('strong')?.textContent).toBe('Latchkey can’t start: authProxyUrl is not valid')
    expect(panel.textContent).toContain(
      'createLatchkey: authProxyUrl is required; use the URL printed by latchkey-service dev',
    )
    // Option names and commands are code, not text between literal backticks.
    expect(panel.textContent).not.toContain('`')
    expect([...panel.querySelectorAll('code')].map((code) => code.textContent)).toEqual([
      'authProxyUrl',
      'authProxyUrl',
      'latchkey-service dev',
      'npx latchkey-service dev --env .env.local',
      '.env.local',
    ])
    expect(warn).toHaveBeenCalledWith('[latchkey] CONFIG_INVALID:', expect.any(ConfigInvalidError))
  })

  it('throws the ConfigInvalidError in a production build, as before', () => {
    vi.stubEnv('NODE_ENV', 'production')
    // React reports the render error it rethrows.
    vi.spyOn(console, 'error').mockImplementation(() => {})
    expect(() =>
      render(
        <LatchkeyProvider config={unset}>
          <p>the app</p>
        </LatchkeyProvider>,
      ),
    ).toThrow(/createLatchkey: `authProxyUrl` is required/)
  })
})
