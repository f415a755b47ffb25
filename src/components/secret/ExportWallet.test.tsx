import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { ExportWallet } from './ExportWallet.tsx'
import { ImportWallet } from './ImportWallet.tsx'

describe('<ExportWallet/> and <ImportWallet/>', () => {
  it('asks for an acknowledgement, then loads the service frame sandboxed; the page never holds the phrase', async () => {
    const user = userEvent.setup()
    const { client, service, render } = await signedInClient()
    const { walletId } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    render(<ExportWallet open onOpenChange={() => {}} walletId={walletId} frameMode="inline" />)
    const reveal = screen.getByRole('button', { name: 'Reveal recovery phrase' })
    expect(reveal).toHaveProperty('disabled', true)
    expect(screen.getByText('Never share it, not even with support.')).toBeTruthy()
    await user.click(screen.getByRole('checkbox', { name: 'I understand and I’m in a private place' }))
    await user.click(reveal)
    const frame = (await screen.findByTitle('Your recovery phrase, in a secure frame', undefined, {
      timeout: 10_000,
    })) as HTMLIFrameElement
    expect(frame.getAttribute('sandbox')).toBe('allow-scripts')
    await waitFor(() => expect(frame.getAttribute('srcdoc')).toContain(service.dev.signerPublicKey))
    expect(
      screen.getByText('Shown inside a frame served by the wallet service. This app never sees it.'),
    ).toBeTruthy()
  })

  it('exports a private key from the service origin in url mode', async () => {
    const { client, render } = await signedInClient()
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    render(<ExportWallet open onOpenChange={() => {}} address={addresses[0]} />)
    expect(screen.getByRole('heading', { name: 'Export private key' })).toBeTruthy()
    expect(screen.getByRole('button', { name: 'Reveal private key' })).toBeTruthy()
  })

  it('import: the phrase field lives in the frame and Import waits for a valid phrase', async () => {
    const { render } = await signedInClient()
    render(<ImportWallet open onOpenChange={() => {}} frameMode="inline" />)
    expect(screen.getByText(/Type your recovery phrase in the secure frame below/)).toBeTruthy()
    expect(
      await screen.findByTitle('Recovery phrase, in a secure frame', undefined, { timeout: 10_000 }),
    ).toBeTruthy()
    expect(screen.queryByRole('textbox', { name: /recovery phrase/i })).toBeNull()
    expect(screen.getByRole('button', { name: 'Import wallet' })).toHaveProperty('disabled', true)
  })
})
