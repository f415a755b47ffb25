// Checks that the README's code runs as pasted: every ```tsx / ```ts block of README.md and of the
// docs/*.md files, each starting with a line that names its file (`// src/App.tsx`), is written into
// a fresh app (the files of a stock `create-vite` react-ts app around them), with the kit from its
// packed tarball (scripts/packKit.mjs). Then `tsc` type-checks it with the template's own strict
// settings (noUnusedLocals, noUnusedParameters…) (also against React 18's types) and Vite builds
// it; the Node example runs against a local service. A block without a file line fails the test,
// so no snippet goes unchecked. The README keeps its sections in the newcomer's order and stays
// under README_MAX_LINES lines.
// Then, as a newcomer does: `npm install` of the three packed packages into a fresh app outside the
// repository (no EBADENGINE warning allowed), `latchkey-service dev --evm` from that install (anvil
// from the registry on first use), an account funded through `/dev/faucet` pays with the README's
// viem recipe; and an app without its config renders a panel naming the missing field.
// The wagmi recipe, in a fresh Vite react-ts app outside the repository with exactly the README's
// installs (the kit's tarballs, then `npm install wagmi viem`), type-checks, builds with the app's
// own Vite, and in its dev server names a missing config value on the page, then with the service's
// `.env.local` connects wagmi after an e-mail sign-in in Chromium.
// `--reuse-packs` reuses the tarballs of an earlier run; `--skip-config-panel` skips the config panel
// check; `--only-wagmi` runs only the wagmi recipe's app (with the README's block checks).
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { packKit, root } from './packKit.mjs'

/** The README's sections (`## ` headings), in the order a newcomer needs them. */
export const README_SECTIONS = [
  'Two commands',
  'Put it in your app',
  'Glossary',
  'Recipes',
  'Sending',
  'Production',
  'More',
]
/** The README's main file stays shorter than this; reference material lives in docs/. */
export const README_MAX_LINES = 250

const started = Date.now()
const step = (text) =>
  process.stderr.write(`[readme ${((Date.now() - started) / 1000).toFixed(1)}s] ${text}\n`)

/**
 * The TypeScript blocks of a markdown file as `{ file, code, line, source }`; the first line
 * `// <path>` names the file.
 */
export function readmeBlocks(markdown, source = 'README.md') {
  const blocks = []
  for (const match of markdown.matchAll(/^```(tsx|ts)\n([\s\S]*?)^```$/gm)) {
    const [, , code] = match
    const line = markdown.slice(0, match.index).split('\n').length
    const file = /^\/\/ ([\w./-]+\.tsx?)(?:\s|$)/.exec(code)?.[1]
    if (!file) throw new Error(`${source}:${line}: a ${match[1]} block must start with \`// <file path>\``)
    if (file.startsWith('/') || file.includes('..'))
      throw new Error(`${source}:${line}: ${file} is not relative`)
    blocks.push({ file, code, line, source })
  }
  return blocks
}

/**
 * What a newcomer reads first: the title, one paragraph and the screenshot, then exactly the
 * sections of README_SECTIONS in that order, in fewer than README_MAX_LINES lines. Returns the
 * problems (empty when the README is in shape).
 */
export function readmeShapeProblems(markdown) {
  const problems = []
  const lines = markdown.replace(/\n$/, '').split('\n')
  if (lines.length >= README_MAX_LINES)
    problems.push(
      `README.md has ${lines.length} lines; keep it under ${README_MAX_LINES} (move reference material to docs/)`,
    )
  if (lines[0] !== '# Latchkey') problems.push('README.md must start with `# Latchkey`')
  // Headings inside code blocks (a shell comment, say) are not sections.
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, '')
  const sections = [...prose.matchAll(/^## (.+)$/gm)].map((match) => match[1].trim())
  if (sections.join('\n') !== README_SECTIONS.join('\n'))
    problems.push(
      `README.md's sections are ${JSON.stringify(sections)}; expected ${JSON.stringify(README_SECTIONS)}`,
    )
  const intro = prose.slice(0, prose.indexOf('\n## '))
  if (!intro.includes('docs/playground.png'))
    problems.push('the screenshot (docs/playground.png) must come before the first section')
  return problems
}

/**
 * What the Vite react-ts template's linter (eslint-plugin-react-refresh's `only-export-components`)
 * would warn about once a block is pasted: a `.tsx` file that exports a component and also
 * something else (a config object, a helper), which breaks Fast Refresh for that file. Names that
 * start with a capital are taken as components, as the rule does. Returns the problems.
 */
export function onlyExportComponentsProblems(blocks) {
  const problems = []
  for (const { file, code, line, source } of blocks) {
    if (!file.endsWith('.tsx')) continue
    const exported = [
      ...code.matchAll(
        /^export\s+(?:default\s+)?(?:async\s+)?(?:function|const|let|var|class)\s+([A-Za-z_$][\w$]*)/gm,
      ),
    ].map((match) => match[1])
    for (const match of code.matchAll(/^export\s*\{([^}]*)\}/gm))
      exported.push(
        ...match[1].split(',').map((name) =>
          name
            .trim()
            .split(/\s+as\s+/)
            .pop(),
        ),
      )
    const components = exported.filter((name) => /^[A-Z]/.test(name))
    const others = exported.filter((name) => name && !/^[A-Z]/.test(name))
    if (components.length > 0 && others.length > 0)
      problems.push(
        `${source}:${line}: ${file} exports ${others.join(', ')} next to the component ${components.join(', ')}: ` +
          "the react-ts template's linter warns (react-refresh/only-export-components); move it to its own module",
      )
  }
  return problems
}

/** The docs/*.md files' TypeScript blocks, checked like the README's. */
function docsBlocks() {
  const blocks = []
  for (const name of readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort())
    blocks.push(...readmeBlocks(readFileSync(path.join(root, 'docs', name), 'utf8'), `docs/${name}`))
  return blocks
}

// The `create-vite` react-ts template's settings (tsconfig.app.json / tsconfig.node.json).
const strict = {
  strict: true,
  noUnusedLocals: true,
  noUnusedParameters: true,
  erasableSyntaxOnly: true,
  noFallthroughCasesInSwitch: true,
  noUncheckedSideEffectImports: true,
}
const bundler = {
  module: 'ESNext',
  moduleResolution: 'bundler',
  allowImportingTsExtensions: true,
  verbatimModuleSyntax: true,
  moduleDetection: 'force',
  noEmit: true,
  skipLibCheck: true,
}
const tsconfigApp = {
  compilerOptions: {
    target: 'ES2022',
    useDefineForClassFields: true,
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: ['vite/client'],
    jsx: 'react-jsx',
    ...bundler,
    ...strict,
  },
  include: ['src'],
}
const tsconfigNode = {
  compilerOptions: { target: 'ES2023', lib: ['ES2023'], types: ['node'], ...bundler, ...strict },
  include: ['node', 'vite.config.ts'],
}
const stockFiles = {
  'index.html': `<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>README app</title>
  </head>
  <body>
    <div id="root"></div>
    <script type="module" src="/src/main.tsx"></script>
  </body>
</html>
`,
  'src/main.tsx': `import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import App from './App.tsx'

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
)
`,
}

/**
 * What npm users get: a client boundary on the entry, source maps whose sources are in the
 * tarball, a repository, and README links that resolve outside the repository (absolute URLs).
 */
function checkPublished(dir) {
  const problems = []
  if (!readFileSync(path.join(dir, 'dist/index.js'), 'utf8').startsWith("'use client'"))
    problems.push("dist/index.js does not start with 'use client'")
  const maps = readdirSync(path.join(dir, 'dist'), { recursive: true }).filter((f) => f.endsWith('.js.map'))
  if (maps.length === 0) problems.push('no source maps in dist')
  for (const map of maps) {
    const { sources } = JSON.parse(readFileSync(path.join(dir, 'dist', map), 'utf8'))
    for (const source of sources) {
      const file = path.resolve(path.dirname(path.join(dir, 'dist', map)), source)
      if (!existsSync(file))
        problems.push(`dist/${map} points to ${path.relative(dir, file)}, not in the package`)
    }
  }
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  if (!manifest.repository) problems.push('package.json has no repository')
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8')
  for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g))
    if (!/^(https?:|mailto:|#)/.test(target))
      problems.push(`README link ${target} is relative (broken on npm)`)
  if (problems.length) throw new Error(`the packed kit:\n  ${problems.slice(0, 20).join('\n  ')}`)
}

/**
 * Runs the README's Node example against a fresh local service: its placeholders become the
 * service's ids, and it must print an Ethereum address and a 65-byte signature.
 */
async function runHeadless(app, code) {
  step('node/headless.ts against a local service')
  const { startService } = await import('./devStack.mjs')
  const service = await startService({ log: () => {} })
  try {
    const replacements = [
      ["'http://localhost:8787'", JSON.stringify(service.baseUrl)],
      ["authProxyConfigId: '…'", `authProxyConfigId: ${JSON.stringify(service.authProxyConfigId)}`],
      ["organizationId: '…'", `organizationId: ${JSON.stringify(service.organizationId)}`],
    ]
    let runnable = code
    for (const [from, to] of replacements) {
      if (!runnable.includes(from)) throw new Error(`node/headless.ts no longer contains ${from}`)
      runnable = runnable.replaceAll(from, to)
    }
    writeFileSync(path.join(app, 'node/headless.run.ts'), runnable)
    let output
    try {
      output = execFileSync(process.execPath, ['--import', 'tsx', 'node/headless.run.ts'], {
        cwd: app,
        encoding: 'utf8',
        stdio: 'pipe',
        timeout: 60_000,
      })
    } catch (error) {
      throw new Error(`node/headless.ts failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}`)
    }
    if (!/^0x[0-9a-fA-F]{40} 0x[0-9a-f]{130}$/m.test(output))
      throw new Error(`node/headless.ts printed no address and signature:\n${output}`)
  } finally {
    await service.close()
  }
}

async function main() {
  const reuse = process.argv.includes('--reuse-packs')
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
  const shape = readmeShapeProblems(readme)
  if (shape.length) throw new Error(shape.join('\n'))
  const blocks = [...readmeBlocks(readme), ...docsBlocks()]
  if (!blocks.some((b) => b.file === 'src/App.tsx' && b.source === 'README.md'))
    throw new Error('README.md has no `// src/App.tsx` block')
  for (const block of blocks) {
    const twin = blocks.find((other) => other !== block && other.file === block.file)
    if (twin)
      throw new Error(
        `${block.source}:${block.line} and ${twin.source}:${twin.line} both write ${block.file}`,
      )
  }
  const refresh = onlyExportComponentsProblems(blocks)
  if (refresh.length) throw new Error(refresh.join('\n'))
  step(`${blocks.length} code blocks: ${blocks.map((b) => `${b.file} (${b.source})`).join(', ')}`)

  const packs = packKit({ reuse })
  const { kit, protocol } = packs
  if (process.argv.includes('--only-wagmi')) {
    await wagmiRecipeApp(packs, blocks)
    step('ok: the wagmi recipe in a fresh app')
    return
  }
  // Inside the repository's node_modules, so react, vite and typescript resolve from the root
  // install; the kit itself comes only from its tarball.
  const app = path.join(root, 'node_modules/.cache/readme-app')
  rmSync(app, { recursive: true, force: true })
  for (const [name, tarball] of [
    ['latchkey', kit],
    ['@latchkey/protocol', protocol],
  ]) {
    const dir = path.join(app, 'node_modules', name)
    mkdirSync(dir, { recursive: true })
    execFileSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1'])
  }
  checkPublished(path.join(app, 'node_modules/latchkey'))
  const write = (file, text) => {
    mkdirSync(path.dirname(path.join(app, file)), { recursive: true })
    writeFileSync(path.join(app, file), text)
  }
  write('package.json', JSON.stringify({ name: 'readme-app', private: true, type: 'module' }, null, 2))
  write('tsconfig.app.json', JSON.stringify(tsconfigApp, null, 2))
  write('tsconfig.node.json', JSON.stringify(tsconfigNode, null, 2))
  for (const [file, text] of Object.entries(stockFiles)) write(file, text)
  for (const { file, code } of blocks) write(file, code)

  // The same app against React 18's types (scripts/react18), as an app on React 18.3 sees the kit.
  execFileSync(process.execPath, [path.join(root, 'scripts/react18/ensure.mjs')], { stdio: 'inherit' })
  const types18 = path.join(root, 'scripts/react18/node_modules/@types')
  write(
    'tsconfig.react18.json',
    JSON.stringify({
      extends: './tsconfig.app.json',
      compilerOptions: {
        paths: {
          react: [`${types18}/react/index.d.ts`],
          'react/*': [`${types18}/react/*`],
          'react-dom': [`${types18}/react-dom/index.d.ts`],
          'react-dom/*': [`${types18}/react-dom/*`],
        },
      },
    }),
  )

  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const configs = ['tsconfig.app.json', 'tsconfig.react18.json']
  if (blocks.some((b) => b.file.startsWith('node/'))) configs.push('tsconfig.node.json')
  for (const config of configs) {
    step(`tsc -p ${config}`)
    try {
      execFileSync(process.execPath, [tsc, '-p', config], { cwd: app, encoding: 'utf8', stdio: 'pipe' })
    } catch (error) {
      throw new Error(`the README's code does not type-check (${config}):\n${error.stdout}${error.stderr}`)
    }
  }

  const headless = blocks.find((b) => b.file === 'node/headless.ts')
  if (headless) await runHeadless(app, headless.code)

  step('vite build')
  const [{ build }, { default: react }] = await Promise.all([import('vite'), import('@vitejs/plugin-react')])
  await build({
    root: app,
    configFile: false,
    logLevel: 'warn',
    plugins: [react()],
    build: { outDir: path.join(app, 'dist'), emptyOutDir: true },
  })
  if (!existsSync(path.join(app, 'dist/index.html'))) throw new Error('vite build wrote no dist/index.html')
  step('the README app type-checks and builds against the packed package')

  const viem = blocks.find((b) => b.file === 'src/viem.ts')
  if (!viem) throw new Error('README.md has no `// src/viem.ts` block (the viem recipe)')
  await newcomerApp(packs, viem.code)
  await wagmiRecipeApp(packs, blocks)
  if (process.argv.includes('--skip-config-panel')) step('skipped: the config error panel')
  else await checkConfigErrorPanel(app)
  step('ok: the README and docs code, the packed packages in a fresh app, dev --evm and the viem recipe')
}

/** The `npm warn EBADENGINE` packages of an npm output, as `name@version`. */
export function badEngines(output) {
  const names = new Set()
  for (const match of output.matchAll(/EBADENGINE\s+package: '([^']+)'/g)) names.add(match[1])
  if (names.size === 0 && /EBADENGINE/.test(output)) names.add('(a package npm did not name)')
  return [...names]
}

/**
 * A newcomer's app outside the repository: the three packed packages installed as the README says
 * (the kit with @latchkey/protocol in one install, the service as a dev dependency) and viem, from
 * the registry; no dependency may warn that it does not support this Node. Then the installed
 * `latchkey-service dev --evm` (anvil from the registry into the app's node_modules/.cache), a
 * sign-in through the outbox, a wallet, 1 ETH from `/dev/faucet`, and the README's `payWithViem`
 * against that node: the transaction must be mined and succeed.
 */
async function newcomerApp({ kit, protocol, service: servicePack }, viemRecipe) {
  const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-newcomer-'))
  const stops = []
  try {
    const viemVersion = JSON.parse(
      readFileSync(path.join(root, 'node_modules/viem/package.json'), 'utf8'),
    ).version
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ name: 'newcomer-app', private: true, type: 'module' }, null, 2),
    )
    const npmInstall = (args) => {
      step(`npm install ${args.map((a) => path.basename(a)).join(' ')}`)
      // Warnings go to stderr; without --loglevel=error npm prints EBADENGINE there.
      const result = spawnSyncText(npm, ['install', '--no-audit', '--no-fund', ...args], dir)
      if (result.status !== 0) throw new Error(`npm install failed:\n${result.output}`)
      const bad = badEngines(result.output)
      if (bad.length)
        throw new Error(
          `npm install warned EBADENGINE on Node ${process.version} for: ${bad.join(', ')}\n${result.output}`,
        )
    }
    npmInstall([kit, protocol, `viem@${viemVersion}`])
    npmInstall(['-D', servicePack])

    step('latchkey-service dev --evm from the installed package')
    const bin = path.join(dir, 'node_modules/.bin/latchkey-service')
    const child = spawn(bin, ['dev', '--port', '0', '--evm', '--evm-port', '0', '--json'], {
      cwd: dir,
      env: shellEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    stops.push(() => stopChild(child))
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const info = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no --json line within 240 s\n${stderr}`)), 240_000)
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`latchkey-service exited (${code}) before it was ready\n${stderr}`))
      })
      child.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`could not run ${bin}: ${error.message}`))
      })
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer)
        resolve(JSON.parse(line))
      })
    })
    child.stdout.resume()
    if (info.evmChainId !== 31337 || !/^http:\/\/127\.0\.0\.1:\d+$/.test(info.evmRpcUrl ?? ''))
      throw new Error(
        `dev --evm printed no node: ${JSON.stringify({ evmRpcUrl: info.evmRpcUrl, evmChainId: info.evmChainId })}`,
      )
    if (!existsSync(path.join(dir, 'node_modules/.cache')))
      throw new Error("dev --evm did not install anvil into the app's node_modules/.cache")

    // The recipe as pasted, with the node's URL that `dev --env` writes for Vite (run here by Node).
    const rpcFromEnv = 'http(import.meta.env.VITE_LATCHKEY_RPC_URL)'
    if (!viemRecipe.includes(rpcFromEnv)) throw new Error(`src/viem.ts no longer contains \`${rpcFromEnv}\``)
    mkdirSync(path.join(dir, 'src'))
    writeFileSync(
      path.join(dir, 'src/viem.ts'),
      viemRecipe.replace(rpcFromEnv, `http(${JSON.stringify(info.evmRpcUrl)})`),
    )
    writeFileSync(path.join(dir, 'pay.ts'), payScript(info))
    step('sign in, create a wallet, /dev/faucet, payWithViem')
    let output
    try {
      output = execFileSync(
        process.execPath,
        ['--import', pathToFileURL(path.join(root, 'node_modules/tsx/dist/loader.mjs')).href, 'pay.ts'],
        { cwd: dir, env: shellEnv(), encoding: 'utf8', stdio: 'pipe', timeout: 300_000 },
      )
    } catch (error) {
      throw new Error(
        `the viem recipe failed:\n${error.stdout ?? ''}${error.stderr ?? error.message}\n${stderr}`,
      )
    }
    if (!/^paid 0x[0-9a-f]{64} status 0x1$/m.test(output))
      throw new Error(`the viem recipe did not pay:\n${output}`)
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The newcomer's script: a session, a wallet, 1 ETH from the faucet, then the recipe. */
function payScript(info) {
  return `import { completeOtpSignIn, createLatchkey, createWallet, startOtpSignIn } from 'latchkey/core'
import { payWithViem } from './src/viem.ts'

const baseUrl = ${JSON.stringify(info.baseUrl)}
const client = createLatchkey({
  authProxyUrl: baseUrl,
  baseUrl,
  authProxyConfigId: ${JSON.stringify(info.authProxyConfigId)},
  organizationId: ${JSON.stringify(info.organizationId)},
  keyStore: 'memory',
})
const contact = 'newcomer@example.com'
const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact })
const outbox = await fetch(\`\${baseUrl}/dev/outbox.json?contact=\${encodeURIComponent(contact)}\`)
const { messages } = (await outbox.json()) as { messages: { code: string }[] }
await completeOtpSignIn(client, { ...started, otpCode: messages[0]!.code })
const { addresses } = await createWallet(client, { walletName: 'Newcomer', chains: ['ethereum'] })
const from = addresses[0] as \`0x\${string}\`
const funded = await fetch(\`\${baseUrl}/dev/faucet\`, { method: 'POST', body: JSON.stringify({ address: from, eth: '1' }) })
if (!funded.ok) throw new Error(\`faucet: \${funded.status} \${await funded.text()}\`)
const hash = await payWithViem(client, from)
if (!hash) throw new Error('payWithViem waited for approvals')
const rpc = async (method: string, params: unknown[]) => {
  const response = await fetch(${JSON.stringify(info.evmRpcUrl)}, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  return ((await response.json()) as { result: { status: string } | null }).result
}
let receipt = await rpc('eth_getTransactionReceipt', [hash])
for (let tries = 0; !receipt && tries < 100; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 100))
  receipt = await rpc('eth_getTransactionReceipt', [hash])
}
console.log(\`paid \${hash} status \${receipt?.status}\`)
client.destroy()
`
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/**
 * The environment of a newcomer's shell: without the NODE_ENV=production that Vite's build left in
 * this process (npm would then skip dev dependencies, the service among them).
 */
function shellEnv() {
  const env = { ...process.env }
  delete env.NODE_ENV
  return env
}

/** Runs a command to its end; its stdout and stderr (where npm warns) as one text. */
function spawnSyncText(command, args, cwd) {
  const result = spawnSync(command, args, {
    cwd,
    env: shellEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
  })
  return {
    status: result.status ?? 1,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`,
  }
}

/**
 * The README app with no config at all (no .env: every `import.meta.env.VITE_LATCHKEY_*` is
 * undefined), served by Vite's dev server (a development build) and opened in Chromium: instead of
 * a blank page, `<LatchkeyProvider>` renders an alert that names the missing field.
 */
export async function checkConfigErrorPanel(app) {
  step('the config error panel: the README app without its .env, in a development build')
  const [{ createServer }, { default: react }, { chromium }, { chromiumLaunchOptions }] = await Promise.all([
    import('vite'),
    import('@vitejs/plugin-react'),
    import('playwright-core'),
    import('./chromium.mjs'),
  ])
  if (existsSync(path.join(app, '.env'))) throw new Error('the README app has a .env; this check needs none')
  // Vite's build earlier in this process set NODE_ENV to production, and a server keeps a NODE_ENV
  // it finds: without this the "development" server would serve a production build's behaviour.
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'development'
  const server = await createServer({
    root: app,
    configFile: false,
    logLevel: 'warn',
    plugins: [react()],
    server: { host: '127.0.0.1', port: 0 },
  })
  await server.listen()
  const browser = await chromium.launch(chromiumLaunchOptions)
  try {
    const page = await browser.newPage()
    // What the page said instead, for the failure message.
    const errors = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.goto(server.resolvedUrls.local[0])
    const panel = page.getByRole('alert').filter({ hasText: 'authProxyUrl' })
    await panel
      .first()
      .waitFor({ timeout: 60_000 })
      .catch(async () => {
        const text = (await page.locator('body').innerText()).slice(0, 500)
        throw new Error(
          `no role="alert" naming authProxyUrl on the page of an app without config; the page shows: ${JSON.stringify(text)}; its errors: ${errors.join(' | ').slice(0, 800)}`,
        )
      })
  } finally {
    await browser.close()
    await server.close()
    if (nodeEnv === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = nodeEnv
  }
}

/**
 * The README's `src/*` blocks a recipe file needs: the file and those it imports (`./App`), as
 * `{ file, code }`.
 */
export function recipeFiles(blocks, file) {
  const needed = new Map()
  const visit = (name) => {
    const block = blocks.find((b) => b.file === name || b.file.replace(/\.tsx?$/, '') === name)
    if (!block) throw new Error(`no README or docs block writes ${name}`)
    if (needed.has(block.file)) return
    needed.set(block.file, block.code)
    for (const [, specifier] of block.code.matchAll(/from '(\.\/[^']+)'/g))
      visit(path.posix.join(path.posix.dirname(block.file), specifier))
  }
  visit(file)
  return [...needed].map(([name, code]) => ({ file: name, code }))
}

/**
 * The README's wagmi recipe in a newcomer's own app, outside the repository: a stock Vite react-ts
 * app (create-vite's package.json and config, the repository's versions so npm's cache serves them),
 * then the README's installs: the kit's tarballs, then `npm install wagmi viem` as the recipe
 * says, nothing more (npm leaves @wagmi/core where it likes; the kit must not need it). With the
 * app's own TypeScript and Vite: `tsc -b`'s app config type-checks, `vite build` builds, and the
 * dev server (the `vite` command) serves a page that, without a config, names the missing value in
 * an alert and, with the `.env.local` that `latchkey-service dev --env` writes, signs in by e-mail
 * in Chromium and shows wagmi connected to the new wallet's address. The dev server must log no
 * "Could not resolve".
 */
async function wagmiRecipeApp({ kit, protocol }, blocks) {
  const files = recipeFiles(blocks, 'src/wagmi.tsx')
  const wagmiBlock = files[0].code
  if (!/export (?:function|const) WagmiApp\b/.test(wagmiBlock))
    throw new Error('src/wagmi.tsx (the wagmi recipe) no longer exports WagmiApp')
  const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-wagmi-'))
  const stops = []
  try {
    const version = (name) =>
      JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version
    // What `npm create vite@latest my-app -- --template react-ts` writes, less the lint set-up.
    const manifest = {
      name: 'my-app',
      private: true,
      version: '0.0.0',
      type: 'module',
      scripts: { dev: 'vite', build: 'tsc -b && vite build' },
      dependencies: { react: `^${version('react')}`, 'react-dom': `^${version('react-dom')}` },
      devDependencies: Object.fromEntries(
        ['@types/react', '@types/react-dom', '@vitejs/plugin-react', 'typescript', 'vite'].map((name) => [
          name,
          `^${version(name)}`,
        ]),
      ),
    }
    const write = (file, text) => {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
      writeFileSync(path.join(dir, file), text)
    }
    write('package.json', JSON.stringify(manifest, null, 2))
    write('tsconfig.json', JSON.stringify({ files: [], references: [{ path: './tsconfig.app.json' }] }))
    write('tsconfig.app.json', JSON.stringify(tsconfigApp, null, 2))
    write(
      'vite.config.ts',
      "import react from '@vitejs/plugin-react'\nimport { defineConfig } from 'vite'\n\nexport default defineConfig({ plugins: [react()] })\n",
    )
    write('index.html', stockFiles['index.html'])
    write(
      'src/main.tsx',
      stockFiles['src/main.tsx']
        .replace("import App from './App.tsx'", "import { WagmiApp } from './wagmi.tsx'")
        .replace('<App />', '<WagmiApp />'),
    )
    for (const { file, code } of files) write(file, code)

    const install = (args) => {
      step(`wagmi recipe app: npm install ${args.map((a) => path.basename(a)).join(' ')}`)
      const result = spawnSyncText(npm, ['install', '--no-audit', '--no-fund', ...args], dir)
      if (result.status !== 0) throw new Error(`npm install ${args.join(' ')} failed:\n${result.output}`)
    }
    install([]) // the Vite app
    install([kit, protocol]) // the README's install of the kit
    install(['wagmi', 'viem']) // the recipe's, exactly
    const nested = existsSync(path.join(dir, 'node_modules/wagmi/node_modules/@wagmi/core'))
    const top = existsSync(path.join(dir, 'node_modules/@wagmi/core'))
    step(
      `wagmi recipe app: npm put @wagmi/core ${top ? 'at the top' : nested ? 'inside wagmi only' : 'nowhere'}`,
    )

    const bin = (name) => path.join(dir, 'node_modules/.bin', name)
    step('wagmi recipe app: tsc -p tsconfig.app.json, vite build')
    for (const [command, args] of [
      [bin('tsc'), ['-p', 'tsconfig.app.json']],
      [bin('vite'), ['build', '--logLevel', 'warn']],
    ]) {
      const result = spawnSyncText(command, args, dir)
      if (result.status !== 0)
        throw new Error(
          `the wagmi recipe: ${path.basename(command)} ${args.join(' ')} failed:\n${result.output}`,
        )
    }

    const { chromium } = await import('playwright-core')
    const { chromiumLaunchOptions } = await import('./chromium.mjs')
    const { freePort, startService } = await import('./devStack.mjs')
    const browser = await chromium.launch(chromiumLaunchOptions)
    stops.push(() => browser.close())

    /** `vite` (the app's `npm run dev`) on a free port; the page, with what it and the server said. */
    const devServer = async () => {
      const port = await freePort()
      const child = spawn(bin('vite'), ['--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
        cwd: dir,
        env: shellEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (chunk) => {
        output += chunk
      })
      child.stderr.on('data', (chunk) => {
        output += chunk
      })
      const url = `http://127.0.0.1:${port}/`
      for (const deadline = Date.now() + 60_000; ; ) {
        if (child.exitCode !== null) throw new Error(`vite exited (${child.exitCode}):\n${output}`)
        if (
          await fetch(url).then(
            (r) => r.ok,
            () => false,
          )
        )
          break
        if (Date.now() > deadline) throw new Error(`vite served nothing within 60 s:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      const page = await browser.newPage()
      const errors = []
      page.on('pageerror', (error) => errors.push(error.message))
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text())
      })
      await page.goto(url)
      const said = async () =>
        `the page shows ${JSON.stringify((await page.locator('body').innerText()).slice(0, 400))}; its errors: ${errors.join(' | ').slice(0, 600)}; vite said: ${output.slice(-1500)}`
      const close = async () => {
        await page.close()
        await stopChild(child)
        if (/Could not resolve/.test(output)) throw new Error(`the wagmi recipe's dev server: ${output}`)
      }
      return { page, said, close }
    }

    step('wagmi recipe app: the dev server without a config names the missing value')
    const bare = await devServer()
    try {
      await bare.page
        .getByRole('alert')
        .filter({ hasText: 'authProxyUrl' })
        .first()
        .waitFor({ timeout: 60_000 })
        .catch(async () => {
          throw new Error(
            `the wagmi recipe without a config: no alert naming authProxyUrl; ${await bare.said()}`,
          )
        })
    } finally {
      await bare.close()
    }

    step('wagmi recipe app: latchkey-service dev --env .env.local, sign in, wagmi connected')
    const service = await startService({ args: ['--env', path.join(dir, '.env.local')], log: () => {} })
    stops.push(() => service.close())
    const live = await devServer()
    try {
      const { page } = live
      const email = 'wagmi-recipe@example.com'
      await page.getByText('Sign in to connect.').waitFor({ timeout: 60_000 })
      await page.getByRole('button', { name: 'Sign in', exact: true }).first().click()
      const dialog = page.getByRole('dialog')
      await dialog.getByLabel('Email address').fill(email)
      const since = Date.now()
      await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
      let code
      for (const deadline = Date.now() + 20_000; !code && Date.now() < deadline; ) {
        const outbox = await fetch(`${service.baseUrl}/dev/outbox.json?contact=${encodeURIComponent(email)}`)
        const { messages } = await outbox.json()
        code = messages.find((m) => Date.parse(m.sentAt) >= since - 1000)?.code
        if (!code) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      if (!code) throw new Error(`no code for ${email} in the outbox`)
      await page.getByRole('textbox', { name: /^Digit 1 of \d+$/ }).click()
      await page.keyboard.type(code)
      // A new account is offered a passkey: decline it whenever it shows, until wagmi connects.
      const connected = page.getByText(/^Connected: 0x[0-9a-fA-F]{40}$/)
      for (const deadline = Date.now() + 60_000; !(await connected.isVisible()); ) {
        const notNow = dialog.getByRole('button', { name: 'Not now', exact: true })
        if (await notNow.isVisible()) await notNow.click().catch(() => {})
        if (Date.now() > deadline)
          throw new Error(`wagmi did not connect after sign-in; ${await live.said()}`)
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    } finally {
      await live.close()
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
}

/** SIGTERM, then SIGKILL after 5 s. */
async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
  await exited
  clearTimeout(timer)
}

// Run as a script (not when another script imports its checks).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    await main()
  } catch (error) {
    process.stderr.write(`test-readme: ${error.message}\n`)
    process.exit(1)
  }
}
