import { render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LatchkeyProvider } from '../../react/index.ts'
import { createTestService, latestCode, renderWithService, SERVICE_URL } from '../test/renderWithService.tsx'
import { useUi } from '../ui/useUi.ts'
import { type AuthFlow, AuthFlowContext, type AuthStep } from './AuthFlowContext.ts'
import { AuthModal } from './AuthModal.tsx'
import { authUiStrings } from './authStrings.ts'
import { SuccessStep } from './StatusSteps.tsx'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('the sign-in flow', () => {
  it('moves focus into each new step and links the code step to the dev outbox', async () => {
    const user = userEvent.setup()
    const { service } = await renderWithService(<AuthModal showSuccess />)
    await user.click(screen.getByRole('button', { name: 'Sign in' }))
    const email = await screen.findByRole('textbox', { name: 'Email address' })
    await waitFor(() => expect(document.activeElement).toBe(email))
    await user.type(email, 'focus@example.com{Enter}')
    await screen.findByRole('heading', { name: 'Enter the code' })
    // The code step: its first digit.
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('textbox', { name: 'Digit 1 of 6' })),
    )
    // The local service is a development service: the step links to where its codes go.
    const outbox = screen.getByRole('link', { name: 'Development: open the outbox' })
    expect(outbox.getAttribute('href')).toBe(`${SERVICE_URL}/dev/outbox`)
    await user.keyboard(await latestCode(service, 'focus@example.com'))
    // The success step: its "Done", not the page behind the dialog.
    const done = await screen.findByRole('button', { name: 'Done' }, { timeout: 10_000 })
    await waitFor(() => expect(document.activeElement).toBe(done))
    expect(screen.getByRole('dialog').contains(document.activeElement)).toBe(true)
  })

  it("renders the service's codes: 8 letters and digits when the operator sets them, typed in either case", async () => {
    const user = userEvent.setup()
    const { service } = await renderWithService(<AuthModal showSuccess />, {
      proxySettings: { otpLength: 8, otpAlphabet: 'alphanumeric' },
    })
    await user.click(screen.getByRole('button', { name: 'Sign in' }))
    await user.type(
      await screen.findByRole('textbox', { name: 'Email address' }),
      'letters@example.com{Enter}',
    )
    await screen.findByText(/We sent a code of 8 letters and digits to/)
    const fields = screen.getAllByRole('textbox', { name: /^Character \d of 8$/ })
    expect(fields).toHaveLength(8)
    expect(fields[0]!.getAttribute('inputmode')).toBe('text')
    const code = await latestCode(service, 'letters@example.com')
    expect(code).toMatch(/^[0-9A-Z]{8}$/)
    await user.keyboard(code.toLowerCase())
    await screen.findByRole('button', { name: 'Done' }, { timeout: 10_000 })
  })

  it('says why when the authProxyConfigId is wrong: the service’s code and the fix', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const { config } = await createTestService()
    render(
      <LatchkeyProvider config={{ ...config, authProxyConfigId: 'not-a-config' }}>
        <AuthModal />
      </LatchkeyProvider>,
    )
    await userEvent.setup().click(screen.getByRole('button', { name: 'Sign in' }))
    const alert = await screen.findByText(/isn’t set up correctly/, undefined, { timeout: 10_000 })
    expect(alert.textContent).toMatch(
      /Sign-in isn’t set up correctly for this app\. \(PROXY_CONFIG_NOT_FOUND\) Check authProxyConfigId: use the id printed by latchkey-service dev\./,
    )
    // The names are code, not text between literal backticks.
    expect([...alert.querySelectorAll('code')].map((code) => code.textContent)).toEqual([
      'authProxyConfigId',
      'latchkey-service dev',
    ])
    expect(console.warn).toHaveBeenCalledWith('[latchkey] PROXY_CONFIG_NOT_FOUND:', expect.anything())
  })
})

function OfferHarness({ step }: { step: AuthStep }) {
  const ui = useUi({}, authUiStrings)
  const flow = { ui, step, titleId: 't', busy: false, error: null, finish: () => {} } as unknown as AuthFlow
  return (
    <AuthFlowContext.Provider value={flow}>
      <SuccessStep />
    </AuthFlowContext.Provider>
  )
}

describe('the passkey offer', () => {
  it.each([
    ['otp', 'Add a passkey to this account so you can skip the code.'],
    ['google', 'Add a passkey to this account so you can sign in without Google.'],
    ['wallet', 'Add a passkey to this account so you can sign in without your wallet.'],
  ] as const)('after a sign-in by %s says what a passkey saves', (via, text) => {
    render(<OfferHarness step={{ name: 'offer-passkey', via }} />)
    expect(screen.getByText(text)).toBeTruthy()
  })
})
