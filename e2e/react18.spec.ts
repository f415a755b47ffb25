// The kit on React 18.3: the playground is built again with `react`/`react-dom` resolved to
// React 18 (scripts/react18), served on its own port next to its own local service, and a person
// signs up by e-mail in Spanish, the path that was a white page on React 18 (the lazily loaded
// dictionary used React 19's `use()`).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PreviewServer } from 'vite'
import { expect, readOtpCode, type StackService, stack, test, uniqueEmail } from './fixtures.ts'

// The parts of scripts/devStack.mjs (plain JS, no types) this spec uses.
interface DevStack {
  freePort(): Promise<number>
  jsonRpc(url: string, method: string, params: unknown[]): Promise<unknown>
  playgroundConfig(options: { services: Record<string, unknown>; evm: unknown }): unknown
  startService(options: {
    args: string[]
    log: (line: string) => void
  }): Promise<StackService & { close(): Promise<void> }>
}
const devStackPath: string = '../scripts/devStack.mjs'
const { freePort, jsonRpc, playgroundConfig, startService } = (await import(devStackPath)) as DevStack

const root = fileURLToPath(new URL('..', import.meta.url))
const react18 = path.join(root, 'scripts/react18/node_modules')
const outDir = path.join(root, 'node_modules/.cache/playground-react18-dist')

let preview: PreviewServer | undefined
let service: (StackService & { close(): Promise<void> }) | undefined
let playgroundUrl = ''

test.describe.configure({ mode: 'serial' })

test.beforeAll(async () => {
  test.setTimeout(240_000)
  execFileSync(process.execPath, [path.join(root, 'scripts/react18/ensure.mjs')], { stdio: 'inherit' })
  const port = await freePort()
  playgroundUrl = `http://localhost:${port}`
  service = await startService({ args: ['--allowed-origins', playgroundUrl], log: () => {} })
  const accounts = await jsonRpc(stack.evm.url, 'eth_accounts', [])
  // The playground's Vite plugin serves this to the page (read per request, in this process).
  process.env.LATCHKEY_PLAYGROUND_CONFIG = JSON.stringify(
    playgroundConfig({ services: { default: service }, evm: { ...stack.evm, accounts } }),
  )
  const vite = await import('vite')
  const configFile = fileURLToPath(new URL('../playground/vite.config.ts', import.meta.url))
  // Inline aliases come before the config file's, so every import of React (the kit's, the
  // playground's, react-query's) gets React 18.
  const alias = [
    { find: /^react(\/.*)?$/, replacement: `${react18}/react$1` },
    { find: /^react-dom(\/.*)?$/, replacement: `${react18}/react-dom$1` },
  ]
  await vite.build({ configFile, logLevel: 'warn', resolve: { alias }, build: { outDir } })
  const bundles = readdirSync(path.join(outDir, 'assets')).filter((f) => f.endsWith('.js'))
  const versions = new Set(
    bundles.flatMap((f) =>
      [
        ...readFileSync(path.join(outDir, 'assets', f), 'utf8').matchAll(
          /version[:=]["'`](1[89]\.\d+\.\d+)/g,
        ),
      ].map((m) => m[1] ?? ''),
    ),
  )
  expect(versions.has('18.3.1') && ![...versions].some((v) => v.startsWith('19.'))).toBe(true)
  preview = await vite.preview({
    configFile,
    logLevel: 'warn',
    preview: { port, host: '127.0.0.1', strictPort: true },
    build: { outDir },
  })
})

test.afterAll(async () => {
  await new Promise<void>((resolve) => (preview ? preview.httpServer.close(() => resolve()) : resolve()))
  await service?.close()
})

test('React 18: e-mail sign-up in Spanish, from the landing page to the dashboard', async ({ page }) => {
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  await page.goto(`${playgroundUrl}/?locale=es`)
  await page.getByRole('button', { name: 'Sign in', exact: true }).first().click()
  const dialog = page.getByRole('dialog')
  await expect(dialog.getByRole('heading', { name: 'Iniciar sesión' })).toBeVisible()
  const email = uniqueEmail('react18')
  const since = Date.now()
  await dialog.getByLabel('Correo electrónico').fill(email)
  await dialog.getByRole('button', { name: 'Continuar', exact: true }).click()
  const code = await readOtpCode(service!, email, since)
  await dialog.getByRole('textbox', { name: /^Dígito 1 de \d+$/ }).click()
  await page.keyboard.type(code)
  // New accounts get the passkey offer (in Spanish); declining it closes the modal.
  const notNow = dialog.getByRole('button', { name: 'Ahora no', exact: true })
  await expect(async () => {
    if (await notNow.isVisible()) await notNow.click()
    await expect(dialog).toHaveCount(0, { timeout: 1000 })
  }).toPass({ timeout: 20_000 })
  await expect(page.getByRole('heading', { name: 'Sessions in this browser' })).toBeVisible()
  // `?locale=es` reaches every drop-in on the page (LatchkeyUIProvider), not only the modal.
  await expect(page.getByRole('heading', { name: 'Formas de iniciar sesión' })).toBeVisible()
  expect(errors).toEqual([])
})
