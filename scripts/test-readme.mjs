// Checks that the README's code runs as pasted: every ```tsx / ```ts block whose first line names a
// file (`// src/App.tsx`) is written into a fresh app (the files of a stock `create-vite` react-ts
// app around them), with the kit installed from its packed tarball (scripts/packKit.mjs). Then
// `tsc` type-checks it with the template's own strict settings (noUnusedLocals, noUnusedParameters…)
// (also against React 18's types) and Vite builds it; the Node example runs against a local
// service. A block without a file line fails the test, so no snippet goes unchecked.
// `--reuse-packs` reuses the tarballs of an earlier run.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { packKit, root } from './packKit.mjs'

const started = Date.now()
const step = (text) =>
  process.stderr.write(`[readme ${((Date.now() - started) / 1000).toFixed(1)}s] ${text}\n`)

/** The README's TypeScript blocks as `{ file, code }`; the first line `// <path>` names the file. */
export function readmeBlocks(markdown) {
  const blocks = []
  for (const match of markdown.matchAll(/^```(tsx|ts)\n([\s\S]*?)^```$/gm)) {
    const [, , code] = match
    const line = markdown.slice(0, match.index).split('\n').length
    const file = /^\/\/ ([\w./-]+\.tsx?)(?:\s|$)/.exec(code)?.[1]
    if (!file) throw new Error(`README.md:${line}: a ${match[1]} block must start with \`// <file path>\``)
    if (file.startsWith('/') || file.includes('..'))
      throw new Error(`README.md:${line}: ${file} is not relative`)
    blocks.push({ file, code, line })
  }
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
  const blocks = readmeBlocks(readFileSync(path.join(root, 'README.md'), 'utf8'))
  if (!blocks.some((b) => b.file === 'src/App.tsx'))
    throw new Error('README.md has no `// src/App.tsx` block')
  step(`${blocks.length} code blocks: ${blocks.map((b) => b.file).join(', ')}`)

  const { kit, protocol } = packKit({ reuse })
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
  step('ok: the README app type-checks and builds against the packed package')
}

try {
  await main()
} catch (error) {
  process.stderr.write(`test-readme: ${error.message}\n`)
  process.exit(1)
}
