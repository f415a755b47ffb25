import { screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { confirmTotpFactor } from '../../core/actions/activities/confirmTotpFactor.ts'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createTotpFactor } from '../../core/actions/activities/createTotpFactor.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { getWalletAccounts } from '../../core/actions/queries/getWalletAccounts.ts'
import { getWallets } from '../../core/actions/queries/getWallets.ts'
import { decryptExportBundle, generateExportTarget } from '../../core/bundles/decryptExportBundle.ts'
import { hpkeSeal } from '../../core/bundles/hpkeSeal.ts'
import { verifySignedBundle } from '../../core/bundles/verifySignedBundle.ts'
import { totpCode } from '../../core/test/totpCode.ts'
import { hexToBytes } from '../../core/utils/hex.ts'
import { signedInClient } from '../test/renderWithService.tsx'
import { ExportWallet } from './ExportWallet.tsx'
import { ImportWallet } from './ImportWallet.tsx'

const WORD_COUNTS = [12, 15, 18, 21, 24]

/** The channel the kit wrote into this load of the inline frame's page (only that page has it). */
const channelOf = (frame: HTMLIFrameElement) =>
  /"channel":"([^"]+)"/.exec(frame.getAttribute('srcdoc') ?? '')?.[1]

/** A message from the frame's window as the page receives it: from an opaque origin unless said. */
function fromFrame(frame: HTMLIFrameElement, data: Record<string, unknown>, origin = 'null') {
  window.dispatchEvent(
    new MessageEvent('message', {
      data: { source: 'latchkey-frame', ...data },
      origin,
      source: frame.contentWindow as never,
    }),
  )
}

/**
 * Runs the inline frame's own page (the script the service served, from the srcdoc) in a window
 * of its own: its messages reach the page from an opaque origin, as a sandboxed srcdoc frame's
 * do, and what the page posts into the frame (`posted`) reaches it from the page's origin.
 */
function runFrame(frame: HTMLIFrameElement) {
  const html = frame.getAttribute('srcdoc') ?? ''
  const script = /<script nonce="[^"]*">([\s\S]*)<\/script>/.exec(html)?.[1]
  if (!script) throw new Error('the srcdoc holds no frame script')
  const root = document.createElement('main')
  const posted: Record<string, unknown>[] = []
  const listeners: ((event: unknown) => void)[] = []
  const parent = { postMessage: (data: Record<string, unknown>) => fromFrame(frame, data, 'null') }
  frame.contentWindow!.postMessage = ((data: Record<string, unknown>) => {
    posted.push(data)
    for (const listener of listeners) listener({ source: parent, origin: location.origin, data })
  }) as never
  const frameDocument = {
    documentElement: { style: { setProperty() {} } },
    getElementById: (id: string) => (id === 'root' ? root : root.querySelector(`#${id}`)),
    createElement: (tag: string) => document.createElement(tag),
  }
  const frameWindow = {
    parent,
    addEventListener: (_type: string, listener: (event: unknown) => void) => listeners.push(listener),
  }
  new Function('window', 'document', script)(frameWindow, frameDocument)
  return { root, posted }
}

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

  it("inline: the service's frame page, given this load's channel, shows the phrase it decrypts; the page only relays", async () => {
    const user = userEvent.setup()
    const { client, service, render } = await signedInClient()
    const { walletId } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const { container } = render(
      <ExportWallet open onOpenChange={() => {}} walletId={walletId} frameMode="inline" />,
    )
    await user.click(screen.getByRole('checkbox', { name: 'I understand and I’m in a private place' }))
    await user.click(screen.getByRole('button', { name: 'Reveal recovery phrase' }))
    const frame = (await screen.findByTitle('Your recovery phrase, in a secure frame', undefined, {
      timeout: 10_000,
    })) as HTMLIFrameElement
    await waitFor(() => expect(frame.getAttribute('srcdoc')).toContain(service.dev.signerPublicKey))
    expect(channelOf(frame)).toMatch(/^[0-9a-f]{32}$/)
    const { root, posted } = runFrame(frame)
    const panel = container.ownerDocument.body.querySelector('[data-lk-state]')
    await waitFor(() => expect(panel?.getAttribute('data-lk-state')).toBe('shown'), { timeout: 10_000 })
    expect(posted.map((message) => message.type)).toEqual(['init', 'export-bundle'])
    // The service writes into the page only a channel of letters and digits.
    const origin = encodeURIComponent(location.origin)
    for (const channel of ['%22%3C%2Fscript%3E0123456789abcdef', 'short'])
      expect(
        (
          await client.config.fetch(
            `${client.config.baseUrl}/frame/export?origin=${origin}&channel=${channel}`,
          )
        ).status,
      ).toBe(400)
    const words = [...root.querySelectorAll('ol.words li')].map((li) => li.textContent)
    expect(WORD_COUNTS).toContain(words.length)
    expect(words.every((word) => /^[a-z]+$/.test(word ?? ''))).toBe(true)
    expect(container.ownerDocument.body.textContent).not.toContain(words.join(' '))
  })

  it("inline: a ready from another origin, or without this load's channel, or a second one, exports nothing", async () => {
    const user = userEvent.setup()
    const { client, service, session, render } = await signedInClient()
    const { walletId } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    render(<ExportWallet open onOpenChange={() => {}} walletId={walletId} frameMode="inline" />)
    await user.click(screen.getByRole('checkbox', { name: 'I understand and I’m in a private place' }))
    await user.click(screen.getByRole('button', { name: 'Reveal recovery phrase' }))
    const frame = (await screen.findByTitle('Your recovery phrase, in a secure frame', undefined, {
      timeout: 10_000,
    })) as HTMLIFrameElement
    await waitFor(() => expect(frame.getAttribute('srcdoc')).toContain(service.dev.signerPublicKey))
    const channel = channelOf(frame)!
    const posted: Record<string, unknown>[] = []
    frame.contentWindow!.postMessage = ((message: Record<string, unknown>) => posted.push(message)) as never
    const bundles = () => posted.filter((message) => message.type === 'export-bundle')
    const exportsOf = async () =>
      (await service.store.all('activities')).filter((row) => row.path === 'export_wallet')

    // Another page navigated the frame window (its opener, an iframe in the app can): its ready,
    // with the attacker's key, from its own origin or from a sandboxed (opaque) page of its own.
    const attacker = await generateExportTarget()
    const ready = { type: 'ready', targetPublicKey: attacker.publicKeyHex }
    fromFrame(frame, ready, 'https://evil.example')
    fromFrame(frame, { ...ready, channel }, 'https://evil.example')
    fromFrame(frame, ready)
    fromFrame(frame, { ...ready, channel: '0'.repeat(32) })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect([posted, await exportsOf()]).toEqual([[], []])

    // The frame's own ready: one export, to its key; a second ready of the same load is not read.
    const target = await generateExportTarget()
    fromFrame(frame, { type: 'ready', targetPublicKey: target.publicKeyHex, channel })
    await waitFor(() => expect(bundles()).toHaveLength(1), { timeout: 10_000 })
    fromFrame(frame, { ...ready, channel })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(bundles()).toHaveLength(1)
    expect(await exportsOf()).toHaveLength(1)
    expect(posted.map((message) => message.channel)).toEqual(posted.map(() => undefined))
    const phrase = new TextDecoder().decode(
      await decryptExportBundle(client, {
        exportBundle: bundles()[0]!.exportBundle as string,
        target,
        organizationId: session.organizationId,
      }),
    )
    expect(WORD_COUNTS).toContain(phrase.split(' ').length)
  })

  it("inline import: the frame's page seals the typed phrase; a forged 'encrypted' without the channel imports nothing", async () => {
    const user = userEvent.setup()
    const { client, service, render } = await signedInClient()
    render(<ImportWallet open onOpenChange={() => {}} frameMode="inline" />)
    const frame = (await screen.findByTitle('Recovery phrase, in a secure frame', undefined, {
      timeout: 10_000,
    })) as HTMLIFrameElement
    await waitFor(() => expect(frame.getAttribute('srcdoc')).toContain(service.dev.signerPublicKey))
    const { root, posted } = runFrame(frame)
    const importButton = screen.getByRole('button', { name: 'Import wallet' })
    // What the page posts into the frame, any page in it gets (an opaque origin is only '*'): the
    // signed import target. A page of the attacker's seals its own phrase to it and answers.
    const bundle = await waitFor(() => {
      const found = posted.find((message) => message.type === 'import-bundle')
      if (!found) throw new Error('no import bundle posted yet')
      return found.importBundle as string
    })
    const { targetPublic } = await verifySignedBundle<{ targetPublic: string }>(
      bundle,
      service.dev.signerPublicKey,
    )
    const attackers = generateMnemonic(english)
    const forged = await hpkeSeal({
      plaintext: new TextEncoder().encode(attackers),
      receiverPublicKey: hexToBytes(targetPublic),
    })
    fromFrame(frame, { type: 'input', words: 12, valid: true })
    fromFrame(frame, { type: 'encrypted', encryptedBundle: JSON.stringify(forged) })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect((await getWallets(client, {})).wallets).toEqual([])
    expect(importButton).toHaveProperty('disabled', true)
    // The person's phrase, typed in the frame, is what is imported.
    const area = root.querySelector('textarea')!
    const phrase = generateMnemonic(english)
    area.value = phrase
    area.dispatchEvent(new Event('input'))
    await waitFor(() => expect(importButton).toHaveProperty('disabled', false), { timeout: 10_000 })
    await user.click(importButton)
    await screen.findByRole('heading', { name: 'Wallet imported' }, { timeout: 10_000 })
    const { wallets } = await getWallets(client, {})
    expect(wallets).toHaveLength(1)
    const { accounts } = await getWalletAccounts(client, { walletId: wallets[0]!.walletId })
    expect(accounts.map((a) => a.address)).toContain(mnemonicToAccount(phrase).address)
    expect(area.value).toBe('')
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
    fromFrame(frame, { type: 'ready', targetPublicKey: target.publicKeyHex, channel: channelOf(frame) })
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
