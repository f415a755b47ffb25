import { act, render, screen } from '@testing-library/react'
import { LatchkeyProvider } from 'latchkey'
import { useState } from 'react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createTestService } from '../../src/components/test/renderWithService.tsx'
import type { PlaygroundConfig } from './loadPlaygroundConfig.ts'
import { WagmiPage } from './WagmiPage.tsx'

// No node behind it: the page renders and wagmi tries to reconnect, nothing reaches a chain.
const playgroundConfig = {
  serviceName: 'default',
  service: {} as PlaygroundConfig['service'],
  evm: { rpcUrl: 'http://127.0.0.1:9/', chainId: 31337, caip2: 'eip155:31337', faucetAccount: '0x0' },
} satisfies PlaygroundConfig

const openSignIn = () => {}

/** Like the playground's App: state of its own (the sign-in dialog) above the wagmi page. */
function Shell() {
  const [dialogOpen, setDialogOpen] = useState(false)
  return (
    <>
      <button type="button" onClick={() => setDialogOpen((open) => !open)}>
        {dialogOpen ? 'Close the dialog' : 'Open the dialog'}
      </button>
      <WagmiPage config={playgroundConfig} openSignIn={openSignIn} />
    </>
  )
}

describe('the wagmi page', () => {
  afterEach(() => vi.restoreAllMocks())

  it('renders again under its parent without updating wagmi’s hooks during the render', async () => {
    const errors: string[] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      errors.push(args.map(String).join(' '))
    })
    const { config } = await createTestService()
    render(
      <LatchkeyProvider config={config}>
        <Shell />
      </LatchkeyProvider>,
    )
    expect(await screen.findByTestId('wagmi-status')).toBeTruthy()
    for (const name of ['Open the dialog', 'Close the dialog', 'Open the dialog']) {
      await act(async () => {
        screen.getByRole('button', { name }).click()
        await new Promise((resolve) => setTimeout(resolve, 50))
      })
    }
    expect(errors.filter((e) => e.includes('Cannot update a component'))).toEqual([])
    expect(screen.getByTestId('wagmi-chain').textContent).not.toContain('eip155')
  })
})
