import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { decryptExportBundle, generateExportTarget } from '../../core/bundles/decryptExportBundle.ts'
import { totpCode } from '../../core/test/totpCode.ts'
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

// issue 38: an export under an MFA policy, against the real service. The frame's own script does not
// run here: the test plays the frame (its "ready" with a target key, and what the page posts to it).
describe('<ExportWallet/> under an MFA policy', () => {
  async function heldExport() {
    const user = userEvent.setup()
    const fixture = await signedInClient()
    const { client, service, session, render } = fixture
    const { factorId, secret } = await createTotpFactor(client, {})
    await confirmTotpFactor(client, { factorId, code: totpCode(secret) })
    const { walletId } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    await createMfaPolicy(client, {
      mfaPolicyName: 'exports need a code',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_LATCHKEY_TOTP' }] }],
      order: 0,
    })
    const changes: boolean[] = []
    render(<ExportWallet open onOpenChange={(o) => changes.push(o)} walletId={walletId} frameMode="inline" />)
    await user.click(screen.getByRole('checkbox', { name: 'I understand and I’m in a private place' }))
    await user.click(screen.getByRole('button', { name: 'Reveal recovery phrase' }))
    const frame = (await screen.findByTitle('Your recovery phrase, in a secure frame', undefined, {
      timeout: 10_000,
    })) as HTMLIFrameElement
    await waitFor(() => expect(frame.getAttribute('srcdoc')).toContain(service.dev.signerPublicKey))
    // What the page posts into the frame (the theme, then the bundle).
    const posted: Record<string, unknown>[] = []
    const frameWindow = frame.contentWindow!
    frameWindow.postMessage = ((message: Record<string, unknown>) => posted.push(message)) as never
    const target = await generateExportTarget()
    window.dispatchEvent(
      new MessageEvent('message', {
        data: { source: 'latchkey-frame', type: 'ready', targetPublicKey: target.publicKeyHex },
        source: frameWindow as never,
      }),
    )
    const bundles = () => posted.filter((message) => message.type === 'export-bundle')
    const exportsOf = async () =>
      (await service.store.all('activities')).filter((row) => row.path === 'export_wallet')
    return { user, client, session, secret, target, changes, bundles, exportsOf }
  }

  it('asks for the code: a wrong one stays on the step, the right one puts the phrase in the frame', async () => {
    const { user, client, session, secret, target, bundles, exportsOf } = await heldExport()
    const field = (await screen.findByRole(
      'textbox',
      { name: 'Authenticator code' },
      { timeout: 10_000 },
    )) as HTMLInputElement
    await waitFor(() => expect(document.activeElement).toBe(field))
    expect((await exportsOf()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])

    const now = Date.now()
    const valid = new Set([-30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, now + d)))
    const wrong = ['111111', '222222', '333333', '444444', '555555'].find((c) => !valid.has(c))!
    await user.type(field, `${wrong}{Enter}`)
    expect(await screen.findByText(/That code isn’t right/)).toBeTruthy()
    await waitFor(() => expect(document.activeElement).toBe(field))
    expect(field.getAttribute('aria-invalid')).toBe('true')
    expect(bundles()).toEqual([])
    expect((await exportsOf()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])

    // The confirmation used this step's code: the next one.
    await user.clear(field)
    await user.type(field, `${totpCode(secret, Date.now() + 30_000)}{Enter}`)
    await waitFor(() => expect(bundles()).toHaveLength(1), { timeout: 10_000 })
    expect(screen.queryByRole('textbox', { name: 'Authenticator code' })).toBeNull()
    const [bundle] = bundles()
    expect(bundle).toMatchObject({ secret: 'mnemonic', organizationId: session.organizationId })
    // It opens with the frame's key only, to the wallet's phrase.
    const phrase = new TextDecoder().decode(
      await decryptExportBundle(client, {
        exportBundle: bundle!.exportBundle as string,
        target,
        organizationId: session.organizationId,
      }),
    )
    expect(phrase.split(' ').length).toBeGreaterThanOrEqual(12)
    expect((await exportsOf()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_COMPLETED'])
  })

  it('Cancel closes it and changes nothing: the export stays waiting, nothing reaches the frame', async () => {
    const { user, changes, bundles, exportsOf } = await heldExport()
    await screen.findByRole('textbox', { name: 'Authenticator code' }, { timeout: 10_000 })
    await user.click(screen.getByRole('button', { name: 'Cancel' }))
    expect(changes).toEqual([false])
    expect(bundles()).toEqual([])
    expect((await exportsOf()).map((row) => row.status)).toEqual(['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'])
  })
})
