// The secret frame (`<ImportWallet/>`) seals the typed phrase to the key of the signed bundle the
// host posts in, once it names the organization (and user) the host names. The organization's
// import key (`latchkey_init_user_import`) is signed in a bundle of the same shape, whose
// ciphertexts `latchkey_import_user` opens into new accounts: it names a purpose, and the frame
// refuses any bundle that does, sealing nothing.
import { english, generateMnemonic } from 'viem/accounts'
import { describe, expect, it, vi } from 'vitest'
import { FRAME_SCRIPT } from '../../src/frames/secretFrame.ts'
import { createHarness, ETHEREUM_ACCOUNT, fakeClock, resultOf } from '../../src/testing/harness.ts'

const PARENT_ORIGIN = 'http://localhost:6006'

/**
 * The import frame's script as the page runs it, in a window of its own: `send` posts a message
 * from the host page, `posted` is what the frame posted back, and the phrase field holds `phrase`.
 */
function importFrame(signerPublicKey: string, phrase: string) {
  const posted: Record<string, unknown>[] = []
  const listeners: ((event: unknown) => void)[] = []
  const parent = { postMessage: (message: Record<string, unknown>) => posted.push(message) }
  const element = () => ({
    style: {},
    value: '',
    setAttribute() {},
    addEventListener() {},
    append() {},
    replaceChildren() {},
  })
  const phraseField = { ...element(), value: phrase }
  const document = {
    documentElement: { style: { setProperty() {} } },
    getElementById: (id: string) => (id === 'phrase' ? phraseField : element()),
    createElement: () => element(),
  }
  const window = {
    parent,
    addEventListener: (_type: string, listener: (event: unknown) => void) => listeners.push(listener),
  }
  const start = new Function('window', 'document', `${FRAME_SCRIPT}; return latchkeyFrame`)(
    window,
    document,
  ) as (config: Record<string, unknown>) => void
  start({ kind: 'import', signerPublicKey, parentOrigin: PARENT_ORIGIN })
  const send = (data: Record<string, unknown>) => {
    for (const listener of listeners)
      listener({ source: parent, origin: PARENT_ORIGIN, data: { target: 'latchkey-frame', ...data } })
  }
  return { posted, send }
}

/** Types `phrase` in a new frame, posts `importBundle` in and asks for the ciphertext: what it posts back. */
async function encryptIn(
  signerPublicKey: string,
  phrase: string,
  importBundle: { importBundle: string; organizationId: string; userId?: string },
) {
  const frame = importFrame(signerPublicKey, phrase)
  frame.send({ type: 'init', labels: {} })
  frame.send({ type: 'import-bundle', ...importBundle })
  frame.send({ type: 'encrypt' })
  return vi.waitFor(() => {
    const answer = frame.posted.find((message) => message.type === 'encrypted' || message.type === 'error')
    if (!answer) throw new Error('the frame has not answered yet')
    return answer
  })
}

describe("the secret frame seals a typed phrase only to a user's import target", () => {
  it("refuses the organization import key's bundle for the same organization and user, and seals to init_import_wallet's", async () => {
    const h = await createHarness({ clock: fakeClock(Date.now()) })
    const signer = h.service.dev.signerPublicKey
    const userId = h.service.dev.userId
    const phrase = generateMnemonic(english)
    const organizationKey = resultOf(
      'latchkey_init_user_import',
      await h.submit('latchkey_init_user_import', {}),
    ).importBundle as string
    for (const named of [{ userId }, {}])
      expect(
        await encryptIn(signer, phrase, {
          importBundle: organizationKey,
          organizationId: h.organizationId,
          ...named,
        }),
      ).toMatchObject({ type: 'error', code: 'BUNDLE_MISMATCH' })

    // Control: the user's own target, which the service then opens into a wallet.
    h.clock.advance(1000)
    const userTarget = resultOf('init_import_wallet', await h.submit('init_import_wallet', { userId }))
      .importBundle as string
    const answer = await encryptIn(signer, phrase, {
      importBundle: userTarget,
      organizationId: h.organizationId,
      userId,
    })
    expect(answer).toMatchObject({ type: 'encrypted' })
    h.clock.advance(1000)
    resultOf(
      'import_wallet',
      await h.submit('import_wallet', {
        userId,
        walletName: 'typed',
        encryptedBundle: answer.encryptedBundle,
        accounts: [ETHEREUM_ACCOUNT],
      }),
    )
  })
})
