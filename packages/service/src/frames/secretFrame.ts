import { BUNDLE_HPKE_INFO_TEXT } from '@latchkey/protocol'
import type { Hono } from 'hono'
import type { Runtime } from '../kernel/Runtime.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { configuredOrigins } from '../pipeline/originPolicy.ts'
import type { PipelineEnv } from '../pipeline/readJson.ts'

/**
 * The secret frame: a page served by the service (`GET /frame/export`, `GET /frame/import`) that
 * `<ExportWallet/>` and `<ImportWallet/>` embed in an iframe, so a mnemonic or private key is only
 * ever decrypted, shown or typed inside the service's origin; the host page's scripts never see it.
 *
 * Export: the frame makes its own non-extractable P-256 key, tells the host its public key, the
 * host asks the service for an `exportBundle` encrypted to it and posts the bundle in; the frame
 * verifies the bundle's signature against the signer key embedded by the service, decrypts and
 * shows the secret. Import: the host posts the signed `importBundle`; the person types the phrase
 * in the frame, which HPKE-encrypts it to the bundle's target key and posts back only ciphertext.
 *
 * The script is plain JavaScript with no imports (WebCrypto only), embedded as text, so a
 * minifier can never rename what the page calls. `FRAME_SCRIPT` is exported for tests.
 */
export const FRAME_SCRIPT = String.raw`
const subtle = crypto.subtle
const te = new TextEncoder()
const EMPTY = new Uint8Array(0)
function hexToBytes(hex) {
  if (typeof hex !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(hex)) throw new Error('not hex')
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return out
}
function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
function u16(n) { return new Uint8Array([(n >> 8) & 255, n & 255]) }
async function hmac(key, data) {
  // HKDF with an empty salt uses HashLen zero bytes (RFC 5869); WebCrypto refuses empty HMAC keys.
  const k = await subtle.importKey('raw', key.length ? key : new Uint8Array(32), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return new Uint8Array(await subtle.sign('HMAC', k, data))
}
async function hkdfExpand(prk, info, length) {
  let t = EMPTY
  const out = []
  for (let i = 1; out.length < length; i++) {
    t = await hmac(prk, concat(t, info, new Uint8Array([i])))
    out.push(...t)
  }
  return new Uint8Array(out.slice(0, length))
}
const HPKE_V1 = te.encode('HPKE-v1')
const KEM_SUITE = concat(te.encode('KEM'), u16(0x10))
const SUITE = concat(te.encode('HPKE'), u16(0x10), u16(1), u16(2))
const INFO = te.encode(${JSON.stringify(BUNDLE_HPKE_INFO_TEXT)})
const labeledExtract = (suite, salt, label, ikm) => hmac(salt, concat(HPKE_V1, suite, te.encode(label), ikm))
const labeledExpand = (suite, prk, label, info, length) =>
  hkdfExpand(prk, concat(u16(length), HPKE_V1, suite, te.encode(label), info), length)
async function hpkeKeys(dh, enc, receiver) {
  const eae = await labeledExtract(KEM_SUITE, EMPTY, 'eae_prk', dh)
  const shared = await labeledExpand(KEM_SUITE, eae, 'shared_secret', concat(enc, receiver), 32)
  const pskIdHash = await labeledExtract(SUITE, EMPTY, 'psk_id_hash', EMPTY)
  const infoHash = await labeledExtract(SUITE, EMPTY, 'info_hash', INFO)
  const context = concat(new Uint8Array([0]), pskIdHash, infoHash)
  const secret = await labeledExtract(SUITE, shared, 'secret', EMPTY)
  const key = await labeledExpand(SUITE, secret, 'key', context, 32)
  const nonce = await labeledExpand(SUITE, secret, 'base_nonce', context, 12)
  return { key: await subtle.importKey('raw', key, 'AES-GCM', false, ['encrypt', 'decrypt']), nonce }
}
const importEcdh = (raw) => subtle.importKey('raw', raw, { name: 'ECDH', namedCurve: 'P-256' }, false, [])
async function hpkeOpen(privateKey, receiver, enc, ciphertext) {
  const dh = new Uint8Array(await subtle.deriveBits({ name: 'ECDH', public: await importEcdh(enc) }, privateKey, 256))
  const { key, nonce } = await hpkeKeys(dh, enc, receiver)
  return new Uint8Array(await subtle.decrypt({ name: 'AES-GCM', iv: nonce, additionalData: concat(enc, receiver) }, key, ciphertext))
}
async function hpkeSeal(receiver, plaintext) {
  const ephemeral = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits'])
  const enc = new Uint8Array(await subtle.exportKey('raw', ephemeral.publicKey))
  const dh = new Uint8Array(await subtle.deriveBits({ name: 'ECDH', public: await importEcdh(receiver) }, ephemeral.privateKey, 256))
  const { key, nonce } = await hpkeKeys(dh, enc, receiver)
  const ciphertext = new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: concat(enc, receiver) }, key, plaintext))
  return { encappedPublic: bytesToHex(enc), ciphertext: bytesToHex(ciphertext) }
}
function derToRaw(der) {
  // SEQUENCE { INTEGER r, INTEGER s } -> r || s, each 32 bytes.
  if (der[0] !== 0x30) throw new Error('signature is not DER')
  let at = der[1] & 0x80 ? 2 + (der[1] & 0x7f) : 2
  const parts = []
  for (let i = 0; i < 2; i++) {
    if (der[at] !== 0x02) throw new Error('signature is not DER')
    const length = der[at + 1]
    let int = der.slice(at + 2, at + 2 + length)
    while (int.length > 32 && int[0] === 0) int = int.slice(1)
    if (int.length > 32) throw new Error('signature is not DER')
    const padded = new Uint8Array(32)
    padded.set(int, 32 - int.length)
    parts.push(padded)
    at += 2 + length
  }
  return concat(parts[0], parts[1])
}
async function openSignedBundle(bundle, signerPublicKey) {
  const envelope = JSON.parse(bundle)
  if (!envelope || typeof envelope.data !== 'string' || typeof envelope.dataSignature !== 'string') throw new Error('BUNDLE_INVALID')
  if (String(envelope.enclaveQuorumPublic).toLowerCase() !== signerPublicKey.toLowerCase()) throw new Error('BUNDLE_SIGNATURE_INVALID')
  const key = await subtle.importKey('raw', hexToBytes(signerPublicKey), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify'])
  const data = hexToBytes(envelope.data)
  const ok = await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, derToRaw(hexToBytes(envelope.dataSignature)), data)
  if (!ok) throw new Error('BUNDLE_SIGNATURE_INVALID')
  return JSON.parse(new TextDecoder().decode(data))
}
const WORD_COUNTS = [12, 15, 18, 21, 24]
const wordsOf = (text) => text.trim().toLowerCase().split(/\s+/).filter(Boolean)

function latchkeyFrame(config) {
  const root = document.getElementById('root')
  // Inline (srcdoc) frames are an opaque origin the host cannot check: every message carries the
  // load's channel, which only this page and the host know.
  const channel = config.channel ? { channel: config.channel } : {}
  const post = (message) => window.parent.postMessage({ source: 'latchkey-frame', ...message, ...channel }, config.parentOrigin)
  const fail = (code) => { post({ type: 'error', code }); }
  let keyPair = null
  let receiver = null
  let importBundle = null
  let labels = {}

  function applyInit(message) {
    const style = document.documentElement.style
    for (const [name, value] of Object.entries(message.theme || {}))
      if (/^--lk-[a-z-]+$/.test(name) && typeof value === 'string') style.setProperty(name, value)
    document.documentElement.dir = message.dir === 'rtl' ? 'rtl' : 'ltr'
    if (typeof message.lang === 'string') document.documentElement.lang = message.lang
    labels = message.labels || {}
  }

  async function showExport(message) {
    const data = await openSignedBundle(message.exportBundle, config.signerPublicKey)
    if (data.organizationId !== message.organizationId) throw new Error('BUNDLE_MISMATCH')
    const plaintext = await hpkeOpen(keyPair.privateKey, receiver, hexToBytes(data.encappedPublic), hexToBytes(data.ciphertext))
    root.replaceChildren()
    if (message.secret === 'privateKey') {
      const code = document.createElement('code')
      code.className = 'key'
      code.textContent = bytesToHex(plaintext)
      root.append(code)
    } else {
      const list = document.createElement('ol')
      list.className = 'words'
      list.setAttribute('aria-label', labels.secret || '')
      for (const word of wordsOf(new TextDecoder().decode(plaintext))) {
        const item = document.createElement('li')
        item.textContent = word
        list.append(item)
      }
      root.append(list)
    }
    plaintext.fill(0)
    post({ type: 'shown' })
  }

  function showImport() {
    root.replaceChildren()
    const label = document.createElement('label')
    label.htmlFor = 'phrase'
    label.textContent = labels.secret || ''
    const area = document.createElement('textarea')
    area.id = 'phrase'
    area.rows = 3
    area.autocomplete = 'off'
    area.spellcheck = false
    area.setAttribute('autocapitalize', 'off')
    area.setAttribute('autocorrect', 'off')
    area.placeholder = labels.placeholder || ''
    area.addEventListener('input', () => {
      const words = wordsOf(area.value)
      post({ type: 'input', words: words.length, valid: WORD_COUNTS.includes(words.length) && words.every((w) => /^[a-z]+$/.test(w)) })
    })
    root.append(label, area)
  }

  async function encryptImport() {
    const area = document.getElementById('phrase')
    const words = wordsOf(area ? area.value : '')
    if (!WORD_COUNTS.includes(words.length)) return fail('FIELD_INVALID')
    const data = await openSignedBundle(importBundle.importBundle, config.signerPublicKey)
    // A user's import target names no purpose; one that does (the organization's import key, whose
    // secrets latchkey_import_user opens into new accounts) is not where this phrase goes.
    if (data.organizationId !== importBundle.organizationId || (importBundle.userId && data.userId !== importBundle.userId) || data.purpose !== undefined)
      throw new Error('BUNDLE_MISMATCH')
    const sealed = await hpkeSeal(hexToBytes(data.targetPublic), te.encode(words.join(' ')))
    area.value = ''
    post({ type: 'encrypted', encryptedBundle: JSON.stringify(sealed) })
  }

  window.addEventListener('message', (event) => {
    // Only the embedding page, and only from the origin it was served for.
    if (event.source !== window.parent) return
    if (config.parentOrigin !== '*' && event.origin !== config.parentOrigin) return
    const message = event.data
    if (!message || message.target !== 'latchkey-frame') return
    const task =
      message.type === 'init' ? Promise.resolve(applyInit(message)).then(() => config.kind === 'import' && showImport())
      : message.type === 'export-bundle' && config.kind === 'export' ? showExport(message)
      : message.type === 'import-bundle' && config.kind === 'import' ? Promise.resolve((importBundle = message))
      : message.type === 'encrypt' && config.kind === 'import' && importBundle ? encryptImport()
      : null
    if (task) task.catch((error) => fail(/^[A-Z_]+$/.test(error.message) ? error.message : 'BUNDLE_INVALID'))
  })

  ;(async () => {
    let targetPublicKey
    if (config.kind === 'export') {
      // Non-extractable: the private key cannot leave this frame, not even to this frame's own scripts.
      keyPair = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits'])
      receiver = new Uint8Array(await subtle.exportKey('raw', keyPair.publicKey))
      targetPublicKey = bytesToHex(receiver)
    }
    post({ type: 'ready', kind: config.kind, targetPublicKey })
  })().catch(() => fail('KEY_STORE_UNAVAILABLE'))
}
`

const FRAME_CSS = `
:root{--lk-bg:#fff;--lk-bg-subtle:#f7f7f8;--lk-fg:#18181b;--lk-fg-muted:#52525b;--lk-border:#e4e4e7;--lk-border-strong:#c9c9cf;--lk-accent:#4f46e5;--lk-radius:10px;
--lk-font:ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans Arabic",Arial,sans-serif;--lk-font-mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
*{box-sizing:border-box}html,body{margin:0;background:var(--lk-bg-subtle);color:var(--lk-fg);font:14px/1.5 var(--lk-font)}
#root{padding:12px}
.words{display:grid;grid-template-columns:repeat(auto-fill,minmax(92px,1fr));gap:6px;margin:0;padding:0;list-style:none;counter-reset:w;direction:ltr}
.words li{counter-increment:w;display:flex;gap:6px;align-items:baseline;padding:6px 8px;border:1px solid var(--lk-border);border-radius:calc(var(--lk-radius)*.7);background:var(--lk-bg);font-family:var(--lk-font-mono);font-size:13px}
.words li::before{content:counter(w);color:var(--lk-fg-muted);font-size:11px;min-width:1.4em;text-align:end}
.key{display:block;padding:10px;border:1px solid var(--lk-border);border-radius:var(--lk-radius);background:var(--lk-bg);font:13px/1.6 var(--lk-font-mono);word-break:break-all;direction:ltr;user-select:all}
label{display:block;margin-bottom:6px;color:var(--lk-fg-muted);font-size:13px;font-weight:550}
textarea{width:100%;padding:10px 12px;border:1px solid var(--lk-border-strong);border-radius:var(--lk-radius);background:var(--lk-bg);color:var(--lk-fg);font:15px/1.5 var(--lk-font-mono);resize:none;direction:ltr}
textarea:focus-visible{outline:none;border-color:var(--lk-accent);box-shadow:0 0 0 3px color-mix(in oklab,var(--lk-accent) 28%,transparent)}
`

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c')

export type SecretFrameKind = 'export' | 'import'

/**
 * The frame page. `parentOrigin` is the host page's origin (messages go to, and come from, it only).
 * `channel`: the host's value for this load of an inline frame, echoed in every message it posts.
 */
export function secretFramePage(options: {
  kind: SecretFrameKind
  signerPublicKey: string
  parentOrigin: string
  nonce: string
  channel?: string | undefined
}): string {
  const config = {
    kind: options.kind,
    signerPublicKey: options.signerPublicKey,
    parentOrigin: options.parentOrigin,
    ...(options.channel ? { channel: options.channel } : {}),
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Latchkey secure frame</title><style nonce="${options.nonce}">${FRAME_CSS}</style></head>
<body><main id="root" aria-live="polite"></main>
<script nonce="${options.nonce}">${FRAME_SCRIPT}
latchkeyFrame(${escapeJson(config)})</script></body></html>`
}

const ORIGIN = /^https?:\/\/[^/\s]+$/
/** An inline frame's per-load channel (the kit sends 32 hex digits). */
const CHANNEL = /^[A-Za-z0-9_-]{16,128}$/

function mountFrameRoutes(app: Hono<PipelineEnv>, runtime: Runtime): void {
  app.get('/frame/:kind{export|import}', async (c) => {
    const kind = c.req.param('kind') as SecretFrameKind
    const origin = c.req.query('origin') ?? ''
    // Without a valid origin the frame would have to post to '*': refuse instead.
    if (!ORIGIN.test(origin)) return c.text('origin query parameter must be the embedding page origin', 400)
    const channel = c.req.query('channel')
    if (channel !== undefined && !CHANNEL.test(channel))
      return c.text('channel query parameter must be 16 to 128 letters, digits, - or _', 400)
    // In production only the apps the operator listed may embed the frame (frame-ancestors below).
    if (runtime.options.mode === 'production' && !(await configuredOrigins(runtime)).has(origin))
      return c.text('origin is not one of the allowed origins (proxy.allowed_origins)', 403)
    const nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))))
    c.header(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors ${origin}`,
    )
    c.header('Referrer-Policy', 'no-referrer')
    c.header('Cache-Control', 'no-store')
    c.header('X-Content-Type-Options', 'nosniff')
    c.header('X-Frame-Options', undefined)
    return c.html(
      secretFramePage({
        kind,
        signerPublicKey: runtime.signerPublicKey,
        parentOrigin: origin,
        nonce,
        channel,
      }),
    )
  })
}

/** Serves the secret frame (`/frame/export`, `/frame/import`). */
export const secretFramePlugin: ServicePlugin = { name: 'secret-frame', routes: mountFrameRoutes }
