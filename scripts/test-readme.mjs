// Checks that the README's code runs as pasted: every ```tsx / ```ts block of README.md and of the
// docs/*.md files, each starting with a line that names its file (`// src/App.tsx`), is written into
// a fresh app (the files of a stock `create-vite` react-ts app around them), with the kit from its
// packed tarball (scripts/packKit.mjs). Then `tsc` type-checks it with the template's own strict
// settings (noUnusedLocals, noUnusedParameters…) (also against React 18's types) and Vite builds
// it; the Node example runs against a local service. A block without a file line fails the test,
// so no snippet goes unchecked. The README keeps its sections in the newcomer's order and stays
// under README_MAX_LINES lines.
// Then, as a newcomer does, every recipe in a fresh Vite react-ts app outside the repository with
// exactly the README's installs (the packed kit and service, then each recipe's `npm install …`;
// no EBADENGINE warning allowed): the app's own `tsc` and `vite build`; its dev server without a
// config names the missing value on the page; then, with `npm start`'s ports held, the installed
// `latchkey-service dev --evm --solana --env .env.local` on free ports, and in Chromium the README's
// App (sign in, a wallet, a signature), `<Pay />` with the viem recipe, the ethers recipe, the
// wagmi recipe's sponsored batch of two calls from an account holding no ETH, and docs/solana.md's
// sponsored memo from an account holding no SOL (recipesApp).
// `--reuse-packs` reuses the tarballs of an earlier run; `--skip-config-panel` skips the production
// build's config panel check; `--only-recipes` runs only the recipes app (with the block checks).
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
  problems.push(...relativeReadmeLinks(dir))
  if (problems.length) throw new Error(`the packed kit:\n  ${problems.slice(0, 20).join('\n  ')}`)
}

/**
 * The links of a packed package's README.md that are still relative (broken on npm, which shows
 * the README alone): scripts/absoluteLinks.mjs rewrites them at pack time.
 */
function relativeReadmeLinks(dir) {
  const readme = readFileSync(path.join(dir, 'README.md'), 'utf8').replace(/^```[\s\S]*?^```$/gm, '')
  return [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^(https?:|mailto:|#)/.test(target))
    .map((target) => `${path.basename(dir)}'s README link ${target} is relative (broken on npm)`)
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
  const missing = missingInstalls(blocks, readmeInstalls(readme), providedPackages())
  if (missing.length) throw new Error(missing.join('\n'))
  step(`${blocks.length} code blocks: ${blocks.map((b) => `${b.file} (${b.source})`).join(', ')}`)

  const packs = packKit({ reuse })
  const { kit, protocol } = packs
  if (process.argv.includes('--only-recipes')) {
    await recipesApp(packs, blocks, readme)
    step('ok: the recipes in a fresh app')
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
  const protocolLinks = relativeReadmeLinks(path.join(app, 'node_modules/@latchkey/protocol'))
  if (protocolLinks.length) throw new Error(protocolLinks.join('\n'))
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

  await recipesApp(packs, blocks, readme)
  if (process.argv.includes('--skip-config-panel')) step('skipped: the config error panel')
  else await checkConfigErrorPanel(app)
  step('ok: the README and docs code, and every recipe in a fresh app beside npm start')
}

/** The `npm warn EBADENGINE` packages of an npm output, as `name@version`. */
export function badEngines(output) {
  const names = new Set()
  for (const match of output.matchAll(/EBADENGINE\s+package: '([^']+)'/g)) names.add(match[1])
  if (names.size === 0 && /EBADENGINE/.test(output)) names.add('(a package npm did not name)')
  return [...names]
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
 * The `npm install` commands a newcomer runs, as argument lists, exactly as the README writes them:
 * those of "Put it in your app"'s shell block (the kit's and the service's tarballs), then each
 * recipe's (`npm install viem`, …) in the order of the Recipes section.
 */
export function readmeInstalls(readme) {
  const installs = []
  const section = (from, to) => readme.slice(readme.indexOf(`\n## ${from}`), readme.indexOf(`\n## ${to}`))
  const shell = /```sh\n([\s\S]*?)^```$/m.exec(section('Put it in your app', 'Glossary'))?.[1] ?? ''
  for (const line of shell.split('\n'))
    for (const command of line.replace(/#.*$/, '').split('&&')) {
      const words = command.trim().split(/\s+/)
      if (words[0] === 'npm' && words[1] === 'install' && words.length > 2) installs.push(words.slice(2))
    }
  for (const [, args] of section('Recipes', 'Sending').matchAll(/`npm install ([^`]+)`/g))
    installs.push(args.trim().split(/\s+/))
  return installs
}

/** The package a bare import specifier names (`viem/chains` → `viem`, `@solana/kit/x` → `@solana/kit`). */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/**
 * The packages the `src/` blocks import that no install of `installs` brings and `provided` (the
 * Vite template's and the kit's own dependencies) does not have: a recipe pasted after its install
 * command would not resolve them. Returns the problems.
 */
export function missingInstalls(blocks, installs, provided) {
  const installed = new Set([
    ...provided,
    ...installs
      .flat()
      .filter((arg) => !arg.startsWith('-'))
      .map(packageOf),
  ])
  const problems = []
  for (const { file, code, line, source } of blocks) {
    if (!file.startsWith('src/')) continue
    for (const [, specifier] of code.matchAll(/^import\s[^'"]*?from\s+'([^'.][^']*)'/gm)) {
      if (specifier.startsWith('node:') || installed.has(packageOf(specifier))) continue
      problems.push(
        `${source}:${line}: ${file} imports ${specifier}, which no \`npm install\` of the README brings`,
      )
    }
  }
  return problems
}

/**
 * What a newcomer's app has without a recipe's install: the Vite template's React, the three
 * packages and the kit's own dependencies (`@tanstack/react-query`).
 */
export function providedPackages() {
  const kit = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  return [
    'react',
    'react-dom',
    'latchkey',
    '@latchkey/protocol',
    '@latchkey/service',
    ...Object.keys(kit.dependencies ?? {}),
  ]
}

/** A JSON-RPC call to a node (the `--evm` anvil or the `--solana` LiteSVM); its result. */
async function evmRpc(url, method, params = []) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = await response.json()
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`)
  return body.result
}

/** The receipt of `hash` once mined (within 30 s). */
async function receiptOf(url, hash) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const receipt = await evmRpc(url, 'eth_getTransactionReceipt', [hash])
    if (receipt) return receipt
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${hash} was not mined within 30 s`)
}

/**
 * Where `npm start` listens (the service, anvil): while the recipes run, whatever of these is free
 * answers 503 and counts what reached it, as a stand-in for the repository's stack running beside
 * the app (a taken port is that stack, or another). The app must use only what `--env` wrote.
 */
async function occupyStartPorts() {
  const { createServer } = await import('node:http')
  const hits = []
  const servers = []
  for (const port of [8787, 8545]) {
    const server = createServer((request, response) => {
      hits.push(`${request.method} 127.0.0.1:${port}${request.url}`)
      response.writeHead(503, { 'access-control-allow-origin': '*' }).end('the npm start stack, not your app')
    })
    const listening = await new Promise((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (listening) servers.push(server)
    step(
      `recipes app: port ${port} ${listening ? 'held for the clash check' : 'already taken (a stack beside)'}`,
    )
  }
  return {
    hits,
    close: () => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))),
  }
}

/** The test's entry and harness around the recipes (not docs code): one page per recipe, by hash. */
const harnessFiles = {
  'src/main.tsx': `import { type ComponentType, StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import App from './App.tsx'
import { Recipes } from './Recipes.tsx'
import { SolanaRecipes } from './SolanaRecipes.tsx'
import { WagmiApp } from './wagmi.tsx'

const pages: Record<string, ComponentType> = { '#recipes': Recipes, '#wagmi': WagmiApp, '#solana': SolanaRecipes }
const Page = pages[location.hash] ?? App
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Page />
  </StrictMode>,
)
`,
  'src/Recipes.tsx': `import { AuthModal, LatchkeyProvider, useLatchkey, useSession, useWalletAccounts } from 'latchkey'
import 'latchkey/styles.css'
import { useState } from 'react'
import { transferWithEthers } from './ethers'
import { config } from './latchkeyConfig'
import { Pay } from './Pay'

export function Recipes() {
  return (
    <LatchkeyProvider config={config}>
      <AuthModal />
      <Signed />
    </LatchkeyProvider>
  )
}

function Signed() {
  return useSession() ? <><Pay /><Ethers /></> : <p>Signed out.</p>
}

function Ethers() {
  const client = useLatchkey()
  const accounts = useWalletAccounts()
  const [result, setResult] = useState('')
  const from = accounts.data?.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address
  if (!from) return null
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const transfer = () =>
    transferWithEthers(client, from, token).then(
      (hash) => setResult(\`ethers: \${hash}\`),
      (error: Error) => setResult(\`ethers failed: \${error.message}\`),
    )
  return <p><button type="button" onClick={transfer}>Transfer with ethers</button> <span>{result}</span></p>
}
`,
  'src/SolanaRecipes.tsx': `import { AuthModal, LatchkeyProvider, useSession } from 'latchkey'
import 'latchkey/styles.css'
import { config } from './latchkeyConfig'
import { SolanaSponsored } from './SolanaSponsored'

export function SolanaRecipes() {
  return (
    <LatchkeyProvider config={config}>
      <AuthModal />
      <Signed />
    </LatchkeyProvider>
  )
}

function Signed() {
  return useSession() ? <SolanaSponsored /> : <p>Signed out.</p>
}
`,
}

/**
 * Every README and docs recipe in a newcomer's own app, outside the repository: a stock Vite
 * react-ts app (create-vite's package.json and config, the repository's versions so npm's cache
 * serves them), then exactly the README's installs (readmeInstalls: the kit's and the service's
 * tarballs, then each recipe's `npm install …`), no EBADENGINE warning allowed. With the app's own
 * TypeScript and Vite: `tsc -p tsconfig.app.json` and `vite build`; the dev server without a config
 * names the missing value in an alert. Then, with `npm start`'s ports held (occupyStartPorts),
 * the installed `latchkey-service dev --evm --solana --env .env.local` on free ports (anvil into the app's
 * node_modules/.cache, a delegate and a funded sponsor), and in Chromium: the README's App (e-mail
 * sign-in, a wallet, a signed message), its `<Pay />` (the faucet, then the viem recipe: mined),
 * the ethers recipe (an ERC-20 transfer: mined), and the wagmi recipe with the docs'
 * `<WagmiSponsoredBatch />`: a new account holding no ETH sends two calls that reach `success`
 * and still holds no ETH; and docs/solana.md's `<SolanaSponsored />` on the `--solana` node: a new
 * Solana account holding no SOL writes a memo that reaches `success`, the dev sponsor paying. The dev server must log no "Could not resolve", and nothing may reach
 * `npm start`'s ports.
 */
async function recipesApp(packs, blocks, readme) {
  const files = new Map()
  for (const entry of [
    'src/App.tsx',
    'src/Pay.tsx',
    'src/ethers.ts',
    'src/solana.ts',
    'src/wagmi.tsx',
    'src/WagmiSponsoredBatch.tsx',
    'src/SolanaSponsored.tsx',
  ])
    for (const { file, code } of recipeFiles(blocks, entry)) files.set(file, code)
  const wagmiBlock = files.get('src/wagmi.tsx')
  if (!/export (?:function|const) WagmiApp\b/.test(wagmiBlock) || !wagmiBlock.includes('<Connected />'))
    throw new Error('src/wagmi.tsx (the wagmi recipe) no longer exports WagmiApp rendering <Connected />')
  // As docs/sending.md says: the sponsored batch next to <Connected />.
  files.set(
    'src/wagmi.tsx',
    `import { WagmiSponsoredBatch } from './WagmiSponsoredBatch'\n${wagmiBlock.replace('<Connected />', '<Connected />\n        <WagmiSponsoredBatch />')}`,
  )
  const dir = mkdtempSync(path.join(tmpdir(), 'latchkey-recipes-'))
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
    for (const [file, code] of files) write(file, code)
    for (const [file, code] of Object.entries(harnessFiles)) write(file, code)

    // The README's tarballs (`../latchkey/<name>.tgz`) are the packed ones.
    const tarballs = new Map(Object.values(packs).map((tarball) => [path.basename(tarball), tarball]))
    const install = (args) => {
      const resolved = args.map((arg) => {
        if (!arg.endsWith('.tgz')) return arg
        const tarball = tarballs.get(path.basename(arg))
        if (!tarball)
          throw new Error(`the README installs ${arg}, but npm pack wrote ${[...tarballs.keys()].join(', ')}`)
        return tarball
      })
      step(
        `recipes app: npm install ${args.map((a) => (a.endsWith('.tgz') ? path.basename(a) : a)).join(' ')}`,
      )
      const result = spawnSyncText(npm, ['install', '--no-audit', '--no-fund', ...resolved], dir)
      if (result.status !== 0) throw new Error(`npm install ${args.join(' ')} failed:\n${result.output}`)
      // @solana/kit's @solana/errors depends on commander 15 (Node 22.12+) for its command-line
      // tool, which a browser app never runs: npm warns on Node 20, as docs/solana.md says.
      const bad = badEngines(result.output).filter(
        (name) => !(args.includes('@solana/kit') && /^commander@/.test(name)),
      )
      if (bad.length)
        throw new Error(
          `npm install ${args.join(' ')} warned EBADENGINE on Node ${process.version} for: ${bad.join(', ')}\n${result.output}`,
        )
    }
    install([]) // the Vite app
    const installs = readmeInstalls(readme)
    if (
      !installs.some((args) => args.includes('-D') && args.some((a) => /latchkey-service-.*\.tgz$/.test(a)))
    )
      throw new Error("the README's installs no longer install the service's tarball as a dev dependency")
    for (const args of installs) install(args)

    const serviceLinks = relativeReadmeLinks(path.join(dir, 'node_modules/@latchkey/service'))
    if (serviceLinks.length) throw new Error(serviceLinks.join('\n'))
    const bin = (name) => path.join(dir, 'node_modules/.bin', name)
    step('recipes app: tsc -p tsconfig.app.json, vite build')
    for (const [command, args] of [
      [bin('tsc'), ['-p', 'tsconfig.app.json']],
      [bin('vite'), ['build', '--logLevel', 'warn']],
    ]) {
      const result = spawnSyncText(command, args, dir)
      if (result.status !== 0)
        throw new Error(
          `the recipes app: ${path.basename(command)} ${args.join(' ')} failed:\n${result.output}`,
        )
    }

    const { chromium } = await import('playwright-core')
    const { chromiumLaunchOptions } = await import('./chromium.mjs')
    const { freePort } = await import('./devStack.mjs')
    const browser = await chromium.launch(chromiumLaunchOptions)
    stops.push(() => browser.close())

    /**
     * `vite` (the app's `npm run dev`, `mode`: e.g. `['--mode', 'expiry']`, which reads
     * `.env.expiry.local` too) on a free port; `open(suffix)` opens a page in a new browser context,
     * with what it and the server said.
     */
    const devServer = async (mode = []) => {
      const port = await freePort()
      const child = spawn(
        bin('vite'),
        ['--host', '127.0.0.1', '--port', String(port), '--strictPort', ...mode],
        {
          cwd: dir,
          env: shellEnv(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
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
      const open = async (suffix = '') => {
        const context = await browser.newContext()
        const page = await context.newPage()
        const errors = []
        page.on('pageerror', (error) => errors.push(error.message))
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text())
        })
        await page.goto(`${url}${suffix}`)
        const said = async () =>
          `the page shows ${JSON.stringify((await page.locator('body').innerText()).slice(0, 600))}; its errors: ${errors.join(' | ').slice(0, 600)}; vite said: ${output.slice(-1500)}`
        return { page, said, url }
      }
      const close = async () => {
        await stopChild(child)
        if (/Could not resolve/.test(output)) throw new Error(`the recipes app's dev server: ${output}`)
      }
      return { open, close }
    }

    step('recipes app: the dev server without a config names the missing value (the App, wagmi)')
    const bare = await devServer()
    try {
      for (const [suffix, recipe] of [
        ['', 'the README App'],
        ['#wagmi', 'the wagmi recipe'],
      ]) {
        const { page, said } = await bare.open(suffix)
        await page
          .getByRole('alert')
          .filter({ hasText: 'authProxyUrl' })
          .first()
          .waitFor({ timeout: 60_000 })
          .catch(async () => {
            throw new Error(`${recipe} without a config: no alert naming authProxyUrl; ${await said()}`)
          })
        await page.context().close()
      }
    } finally {
      await bare.close()
    }

    const clash = await occupyStartPorts()
    stops.push(() => clash.close())
    /** The installed `latchkey-service dev … --json` in the app's folder; what it printed. */
    const installedService = async (args) => {
      const child = spawn(bin('latchkey-service'), ['dev', '--port', '0', ...args, '--json'], {
        cwd: dir,
        env: shellEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      stops.push(() => stopChild(child))
      let stderr = ''
      child.stderr.on('data', (chunk) => {
        stderr += chunk
      })
      const printed = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no --json line within 240 s\n${stderr}`)), 240_000)
        child.once('exit', (code) => {
          clearTimeout(timer)
          reject(new Error(`latchkey-service exited (${code}) before it was ready\n${stderr}`))
        })
        createInterface({ input: child.stdout }).once('line', (line) => {
          clearTimeout(timer)
          resolve(JSON.parse(line))
        })
      })
      child.stdout.resume()
      return printed
    }
    step('recipes app: the installed latchkey-service dev --evm --solana --env .env.local on free ports')
    const info = await installedService([
      '--evm',
      '--evm-port',
      '0',
      '--solana',
      '--solana-port',
      '0',
      '--env',
      '.env.local',
    ])
    const rpcUrl = info.evmRpcUrl
    if (
      info.evmChainId !== 31337 ||
      !/^http:\/\/127\.0\.0\.1:\d+$/.test(rpcUrl ?? '') ||
      rpcUrl.endsWith(':8545')
    )
      throw new Error(
        `dev --evm printed no node on a free port: ${JSON.stringify({ rpcUrl, chainId: info.evmChainId })}`,
      )
    if (!info.sponsorAddress) throw new Error('dev --evm printed no sponsorAddress')
    if (!existsSync(path.join(dir, 'node_modules/.cache')))
      throw new Error("dev --evm did not install anvil into the app's node_modules/.cache")
    const env = readFileSync(path.join(dir, '.env.local'), 'utf8')
    if (!info.solanaSponsorAddress || !/^http:\/\/127\.0\.0\.1:\d+$/.test(info.solanaRpcUrl ?? ''))
      throw new Error(`dev --solana printed no node or sponsor: ${JSON.stringify(info)}`)
    if (!existsSync(path.join(dir, 'node_modules/.cache', 'latchkey-litesvm-1.4.1')))
      throw new Error("dev --solana did not install LiteSVM into the app's node_modules/.cache")
    for (const line of [
      `VITE_LATCHKEY_RPC_URL=${rpcUrl}`,
      `VITE_LATCHKEY_BASE_URL=${info.baseUrl}`,
      `VITE_LATCHKEY_SOLANA_RPC_URL=${info.solanaRpcUrl}`,
      `VITE_LATCHKEY_SOLANA_CAIP2=${info.solanaCaip2}`,
    ])
      if (!env.split('\n').includes(line)) throw new Error(`.env.local has no ${line}:\n${env}`)

    /** E-mail sign-in through `<AuthModal/>`'s `trigger` with the code from `service`'s outbox. */
    const signIn = async (page, email, { trigger = 'Sign in', service = info } = {}) => {
      await page.getByRole('button', { name: trigger, exact: true }).first().click()
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
    }
    /**
     * Waits for `locator` with no dialog left open (the modal closes after sign-in, or after the
     * passkey offer, which is declined whenever it shows); its text.
     */
    const waitPastPasskeyOffer = async (page, locator, said, what) => {
      const open = page.locator('dialog[open]')
      for (const deadline = Date.now() + 60_000; ; ) {
        if ((await locator.first().isVisible()) && (await open.count()) === 0) break
        const notNow = page.getByRole('dialog').getByRole('button', { name: 'Not now', exact: true })
        if (await notNow.isVisible()) await notNow.click().catch(() => {})
        if (Date.now() > deadline) throw new Error(`${what}; ${await said()}`)
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      return (await locator.first().innerText()).trim()
    }
    const mined = async (hash, what) => {
      const receipt = await receiptOf(rpcUrl, hash)
      if (receipt.status !== '0x1') throw new Error(`${what} ${hash} reverted`)
      return receipt
    }

    const live = await devServer()
    stops.push(() => live.close())
    {
      step("recipes app: the README's App: sign in, create a wallet, sign")
      const { page, said, url: base } = await live.open()
      await signIn(page, 'readme-app@example.com')
      const create = page.getByRole('button', { name: 'Create a wallet' })
      await waitPastPasskeyOffer(
        page,
        create,
        said,
        'the README App offered no "Create a wallet" after sign-in',
      )
      await create.click()
      const account = await waitPastPasskeyOffer(
        page,
        page.getByText(/^Ethereum account: 0x[0-9a-fA-F]{40}$/),
        said,
        'the README App showed no account',
      )
      const address = account.split(' ').pop()
      await page.getByRole('button', { name: 'Sign “Hello from my app”' }).click()
      await page
        .getByText(/^Signature: 0x[0-9a-f]{130}$/)
        .waitFor({ timeout: 30_000 })
        .catch(async () => {
          throw new Error(`the README App showed no signature; ${await said()}`)
        })

      step('recipes app: <Pay /> (faucet, viem) and the ethers recipe (an ERC-20 transfer)')
      // A token for the ethers recipe: the node's unlocked account deploys it and mints 5 to the user.
      const testToken = JSON.parse(readFileSync(path.join(root, 'contracts/test/TestToken.json'), 'utf8'))
      const { encodeFunctionData } = await import('viem')
      const [deployer] = await evmRpc(rpcUrl, 'eth_accounts')
      const deployed = await mined(
        await evmRpc(rpcUrl, 'eth_sendTransaction', [{ from: deployer, data: testToken.bytecode }]),
        'the token deployment',
      )
      const token = deployed.contractAddress
      await mined(
        await evmRpc(rpcUrl, 'eth_sendTransaction', [
          {
            from: deployer,
            to: token,
            data: encodeFunctionData({ abi: testToken.abi, functionName: 'mint', args: [address, 5n] }),
          },
        ]),
        'the mint',
      )
      // The recipes' page, in the same browser: the session the App started is restored.
      await page.goto(`${base}?token=${token}#recipes`)
      const pay = page.getByRole('button', { name: 'Pay 0.01 ETH' })
      await pay.waitFor({ timeout: 60_000 }).catch(async () => {
        throw new Error(`the recipes page (signed in before) showed no Pay button; ${await said()}`)
      })
      await pay.click()
      const paid = page.getByText(/0x[0-9a-f]{64}/).first()
      await paid.waitFor({ timeout: 60_000 }).catch(async () => {
        throw new Error(`<Pay /> showed no hash; ${await said()}`)
      })
      await mined(/0x[0-9a-f]{64}/.exec(await paid.innerText())[0], 'the viem payment')
      await page.getByRole('button', { name: 'Transfer with ethers' }).click()
      const transferred = page.getByText(/^ethers: 0x[0-9a-f]{64}$|^ethers failed/)
      await transferred.waitFor({ timeout: 60_000 }).catch(async () => {
        throw new Error(`the ethers recipe showed nothing; ${await said()}`)
      })
      const text = await transferred.innerText()
      if (text.startsWith('ethers failed')) throw new Error(`the ethers recipe: ${text}`)
      await mined(text.split(' ').pop(), 'the ethers transfer')
      const dead = await evmRpc(rpcUrl, 'eth_call', [
        {
          to: token,
          data: encodeFunctionData({
            abi: testToken.abi,
            functionName: 'balanceOf',
            args: ['0x000000000000000000000000000000000000dEaD'],
          }),
        },
        'latest',
      ])
      if (BigInt(dead) !== 1n) throw new Error(`the ethers transfer moved ${BigInt(dead)} tokens, not 1`)
      await page.context().close()
    }
    {
      step('recipes app: wagmi, a new account with no ETH sends a sponsored batch of two calls')
      const { page, said } = await live.open('#wagmi')
      await page.getByText('Sign in to connect.').waitFor({ timeout: 60_000 })
      await signIn(page, 'wagmi-recipe@example.com')
      const connected = await waitPastPasskeyOffer(
        page,
        page.getByText(/^Connected: 0x[0-9a-fA-F]{40}$/),
        said,
        'wagmi did not connect after sign-in',
      )
      const address = connected.split(' ').pop()
      const balance = async () => BigInt(await evmRpc(rpcUrl, 'eth_getBalance', [address, 'latest']))
      if ((await balance()) !== 0n) throw new Error(`the new account ${address} holds ETH`)
      await page.getByRole('button', { name: 'Send two calls, sponsored' }).click()
      await page
        .getByText('Batch: success')
        .waitFor({ timeout: 60_000 })
        .catch(async () => {
          throw new Error(`the sponsored batch did not reach success; ${await said()}`)
        })
      if ((await balance()) !== 0n) throw new Error(`the sponsored batch left ${address} holding ETH`)
      await page.context().close()
    }
    {
      step('recipes app: Solana, a new account with no SOL writes a memo, the dev sponsor paying the fee')
      const { page, said } = await live.open('#solana')
      await page.getByText('Signed out.').waitFor({ timeout: 60_000 })
      await signIn(page, 'solana-recipe@example.com')
      const create = page.getByRole('button', { name: 'Create a Solana account' })
      await waitPastPasskeyOffer(page, create, said, 'the Solana recipe offered no "Create a Solana account"')
      await create.click()
      const account = await waitPastPasskeyOffer(
        page,
        page.getByText(/^Solana account: [1-9A-HJ-NP-Za-km-z]{32,44}/),
        said,
        'the Solana recipe showed no account',
      )
      const address = /^Solana account: (\S+)/.exec(account)[1]
      const lamports = async (who) => BigInt((await evmRpc(info.solanaRpcUrl, 'getBalance', [who])).value)
      const sponsorBefore = await lamports(info.solanaSponsorAddress)
      if ((await lamports(address)) !== 0n) throw new Error(`the new Solana account ${address} holds SOL`)
      await page.getByRole('button', { name: 'Write a memo, sponsored' }).click()
      await page
        .getByText('Memo: success')
        .waitFor({ timeout: 60_000 })
        .catch(async () => {
          throw new Error(`the sponsored Solana memo did not reach success; ${await said()}`)
        })
      if ((await lamports(address)) !== 0n) throw new Error(`the sponsored memo left ${address} holding SOL`)
      if ((await lamports(info.solanaSponsorAddress)) >= sponsorBefore)
        throw new Error('the Solana sponsor paid no fee for the sponsored memo')
      await page.context().close()
    }
    {
      step("recipes app: the README's App on 5 s sessions: a failed renewal shows the expired state")
      const brief = await installedService([
        '--session-seconds',
        '5',
        '--data-dir',
        path.join(dir, '.latchkey-expiry'),
        '--env',
        '.env.expiry.local',
      ])
      const server = await devServer(['--mode', 'expiry'])
      stops.push(() => server.close())
      const { page, said } = await server.open()
      const email = 'readme-expiry@example.com'
      await signIn(page, email, { service: brief })
      const create = page.getByRole('button', { name: 'Create a wallet' })
      await waitPastPasskeyOffer(
        page,
        create,
        said,
        'the README App (5 s sessions) offered no "Create a wallet"',
      )
      await create.click()
      // The kit renews the session before it ends, again and again: the wallet outlives 5 s.
      const account = page.getByText(/^Ethereum account: 0x[0-9a-fA-F]{40}$/)
      const before = await waitPastPasskeyOffer(
        page,
        account,
        said,
        'the README App (5 s sessions) showed no account',
      )
      await new Promise((resolve) => setTimeout(resolve, 6000))
      if (!(await account.isVisible())) throw new Error(`the 5 s session was not renewed; ${await said()}`)
      // The renewal fails (a laptop offline, asleep): at expiry the App is signed out, and says so.
      await page.route('**/submit/stamp_login', (route) => route.abort())
      const again = page.getByRole('button', { name: 'Session expired — sign in again', exact: true })
      await again.waitFor({ timeout: 20_000 }).catch(async () => {
        throw new Error(`the README App showed no "Session expired — sign in again"; ${await said()}`)
      })
      await page.getByText('Sign in to get a wallet.').waitFor({ timeout: 5_000 })
      if ((await account.count()) > 0)
        throw new Error('the README App still shows the wallet of an expired session')
      await page.unroute('**/submit/stamp_login')
      await signIn(page, email, { trigger: 'Session expired — sign in again', service: brief })
      const after = await waitPastPasskeyOffer(
        page,
        account,
        said,
        'signing in again did not restore the wallet',
      )
      if (after !== before) throw new Error(`signing in again showed ${after}, not ${before}`)
      await page.context().close()
    }
    if (clash.hits.length)
      throw new Error(
        `the recipes reached npm start's ports instead of what --env wrote: ${clash.hits.join(', ')}`,
      )
    step('recipes app: all recipes reached success; stopping and removing the app')
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
