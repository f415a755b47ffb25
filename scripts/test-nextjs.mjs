// Builds and runs examples/nextjs the way a Next.js user gets the kit: packs `latchkey` and
// `@latchkey/protocol` (scripts/packKit.mjs), copies the example to a temporary folder, installs
// the tarballs and the example's own dependencies from the npm registry, starts a local service,
// runs `next build` with the service's ids in NEXT_PUBLIC_LATCHKEY_* and checks that the
// prerendered page went through the client boundary (the server HTML holds the modal's "Sign in"
// trigger). Then `next start`, and Chromium walks the page by role: e-mail sign-up, the trigger
// shows the account, create a wallet, sign a message (verified with viem).
// `--reuse-packs` reuses earlier tarballs; `--keep` keeps the folder.
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromiumLaunchOptions } from './chromium.mjs'
import { freePort, startService, stopChild } from './devStack.mjs'
import { packKit, root } from './packKit.mjs'

const started = Date.now()
const step = (text) =>
  process.stderr.write(`[nextjs ${((Date.now() - started) / 1000).toFixed(1)}s] ${text}\n`)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const MESSAGE = 'Hello from Next.js'

/** The newest code the local service "sent" to `contact` after `since`. */
async function readCode(service, contact, since) {
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
    const response = await fetch(`${service.baseUrl}/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
    const { messages } = await response.json()
    const fresh = messages.find((m) => Date.parse(m.sentAt) >= since - 1000)
    if (fresh) return fresh.code
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`no code for ${contact} in the outbox`)
}

async function waitForHttp(url, timeoutMs = 30_000) {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`)
}

/** A person's walk through the example, found by role and label only. */
async function walk(origin, service) {
  const [{ chromium }, { verifyMessage }] = await Promise.all([import('playwright-core'), import('viem')])
  const browser = await chromium.launch(chromiumLaunchOptions)
  try {
    const page = await browser.newPage()
    page.setDefaultTimeout(20_000)
    const errors = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(origin)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    const dialog = page.getByRole('dialog')
    const email = `next-${Date.now()}@example.test`
    const since = Date.now()
    await dialog.getByLabel('Email address').fill(email)
    await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
    const code = await readCode(service, email, since)
    await dialog.getByRole('textbox', { name: /^Digit 1 of \d+$/ }).click()
    await page.keyboard.type(code)
    // A new account may be offered a passkey first; then the modal closes itself. The session (and
    // the trigger's "Sign out") can exist before the offer renders, so decline the offer whenever it
    // shows, until the modal has closed.
    const notNow = dialog.getByRole('button', { name: 'Not now', exact: true })
    const deadline = Date.now() + 20_000
    while (await dialog.isVisible()) {
      if (Date.now() > deadline) throw new Error('the sign-in modal did not close within 20 s of the code')
      if (await notNow.isVisible()) await notNow.click().catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // Signed in: the modal's trigger shows the account and offers Sign out, not the sign-in form.
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await page.getByText(`Signed in as ${email}`).waitFor()
    await page.getByRole('button', { name: 'Create a wallet' }).click()
    const account = await page.getByText(/^Ethereum account: 0x[0-9a-fA-F]{40}$/).textContent()
    const address = account.slice('Ethereum account: '.length)
    await page.getByRole('button', { name: `Sign “${MESSAGE}”` }).click()
    const signed = await page.getByText(/^Signature: 0x[0-9a-f]+$/).textContent()
    const signature = signed.slice('Signature: '.length)
    if (!(await verifyMessage({ address, message: MESSAGE, signature })))
      throw new Error(`the signature ${signature} does not verify for ${address}`)
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`)
  } finally {
    await browser.close()
  }
}

const { kit, protocol } = packKit({ reuse: process.argv.includes('--reuse-packs') })
const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-nextjs-'))
const stops = []
let failed = true
try {
  cpSync(path.join(root, 'examples/nextjs'), dir, {
    recursive: true,
    filter: (source) => !/[\\/](node_modules|\.next)([\\/]|$)/.test(source),
  })
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  // The tarballs stand in for the registry; the kit's own dependency on @latchkey/protocol must
  // resolve to its tarball too (it is not published from here).
  manifest.dependencies.latchkey = `file:${kit}`
  manifest.dependencies['@latchkey/protocol'] = `file:${protocol}`
  manifest.overrides = { '@latchkey/protocol': '$@latchkey/protocol' }
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2))

  step(`npm install in ${dir}`)
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    stdio: 'inherit',
  })

  const port = await freePort()
  const origin = `http://localhost:${port}`
  const service = await startService({ args: ['--allowed-origins', origin], log: () => {} })
  stops.push(() => service.close())
  // NEXT_PUBLIC_ values are inlined at build time: the build gets this service's ids.
  const env = {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: '1',
    NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_URL: service.authProxyUrl,
    NEXT_PUBLIC_LATCHKEY_BASE_URL: service.baseUrl,
    NEXT_PUBLIC_LATCHKEY_AUTH_PROXY_CONFIG_ID: service.authProxyConfigId,
    NEXT_PUBLIC_LATCHKEY_ORGANIZATION_ID: service.organizationId,
    NEXT_PUBLIC_LATCHKEY_TRUSTED_SIGNER_PUBLIC_KEY: service.trustedSignerPublicKey ?? service.signerPublicKey,
  }
  const next = path.join(dir, 'node_modules/.bin/next')
  step('next build')
  execFileSync(next, ['build'], { cwd: dir, stdio: 'inherit', env })
  const html = readFileSync(path.join(dir, '.next/server/app/index.html'), 'utf8')
  if (!/<button[^>]*aria-haspopup="dialog"[^>]*>Sign in<\/button>/.test(html))
    throw new Error(
      'the prerendered page has no "Sign in" trigger: <AuthModal/> did not render on the server',
    )

  step(`next start on ${origin}`)
  const server = spawn(next, ['start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: dir,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  stops.push(() => stopChild(server))
  await waitForHttp(origin)
  step('Chromium: sign up, account, create wallet, sign')
  await walk(origin, service)
  step('ok: examples/nextjs builds against the packed kit, prerenders <AuthModal/> and works in the browser')
  failed = false
} catch (error) {
  process.stderr.write(`test-nextjs: ${error.stack ?? error.message}\n`)
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {})
  if (process.argv.includes('--keep')) step(`kept ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
