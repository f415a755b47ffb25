// Story test: builds Storybook (static), serves it, opens every story in real Chromium and fails
// on render or play errors, console errors, axe violations and anything wider than a 320 px screen.
//
//   npm run test:stories                  build, then test every story
//   npm run test:stories -- --no-build    reuse storybook-static/
//   npm run test:stories -- --filter=authmodal   only stories whose id contains the text
//   npm run test:stories -- --shots=/tmp/shots   also save a PNG of each story
//   npm run test:stories -- --viewport=375x812    page size (default 900x760)
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { extname, join, normalize, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { chromiumLaunchOptions } from './chromium.mjs'
import { pastRightEdge } from './overflow.mjs'

const args = process.argv.slice(2)
const flag = (name) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`))
const value = (name) => flag(name)?.split('=').slice(1).join('=')
const staticDir = resolve('storybook-static')
const concurrency = Number(value('concurrency') ?? 3)
const shotsDir = value('shots')
const filter = value('filter')?.toLowerCase()
const [width, height] = (value('viewport') ?? '900x760').split('x').map(Number)
const started = Date.now()

if (!flag('no-build') || !existsSync(join(staticDir, 'index.json'))) {
  console.log('building storybook…')
  execFileSync('npx', ['storybook', 'build', '--quiet', '--disable-telemetry', '-o', staticDir], {
    stdio: ['ignore', 'inherit', 'inherit'],
  })
}

const types = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
}
const server = createServer((request, response) => {
  const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname)).replace(
    /^(\.\.[/\\])+/,
    '',
  )
  const file = join(staticDir, path.endsWith('/') ? `${path}index.html` : path)
  if (path === '/favicon.ico') {
    response.writeHead(204).end()
    return
  }
  if (!file.startsWith(staticDir) || !existsSync(file)) {
    response.writeHead(404).end('not found')
    return
  }
  response.writeHead(200, {
    'content-type': types[extname(file)] ?? 'application/octet-stream',
    // The build's assets are named by their content: a page may keep them (and V8 the code it
    // compiled from them) for the whole run, so each story does not parse the same bundles again.
    ...(path.startsWith('/assets/') ? { 'cache-control': 'public, max-age=3600, immutable' } : {}),
  })
  response.end(readFileSync(file))
})
await new Promise((ok) => server.listen(0, '127.0.0.1', ok))
const origin = `http://127.0.0.1:${server.address().port}`

const index = JSON.parse(readFileSync(join(staticDir, 'index.json'), 'utf8'))
const stories = Object.values(index.entries)
  .filter((e) => e.type === 'story')
  .filter((e) => !filter || filter.split(',').some((f) => e.id.includes(f)))
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

// No back/forward cache: a story's document ends when its tab moves on (storyTab).
const browser = await chromium.launch({
  ...chromiumLaunchOptions,
  args: [...chromiumLaunchOptions.args, '--disable-back-forward-cache'],
})
if (shotsDir) mkdirSync(shotsDir, { recursive: true })

/**
 * A tab that runs one story after another. Each story is a new document in the same tab: a
 * navigation within the origin keeps the tab's renderer process, so a story does not pay for
 * starting one (a new tab per story made the run more than twice as long on a 2-core VM, where
 * starting processes and mapping their memory is dear: bench/README.md, "Story runner").
 * Between stories the tab goes to `about:blank` (the last story's document, its timers and its
 * connections to IndexedDB end), then everything a story can leave behind in the origin is
 * cleared.
 */
async function storyTab(context) {
  let problems = []
  let page
  let cdp
  const open = async () => {
    page = await context.newPage()
    cdp = await context.newCDPSession(page)
    page.on('console', (message) => {
      // First line only: React repeats stacks; the story id and message are what matter.
      if (message.type() === 'error') problems.push(`console error: ${message.text().split('\n')[0]}`)
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()} ${response.url()}`)
    })
  }
  await open()
  return {
    async test(story) {
      // A story that left its tab stuck (a busy loop, a dialog) gets the next one a new tab.
      await page.goto('about:blank', { timeout: 10_000 }).catch(async () => {
        await page.close().catch(() => {})
        await open()
      })
      problems = []
      await cdp.send('Storage.clearDataForOrigin', {
        origin,
        storageTypes:
          'cookies,file_systems,indexeddb,local_storage,shader_cache,websql,service_workers,cache_storage',
      })
      await testStory(page, story, problems)
      return problems
    },
  }
}

async function testStory(page, story, problems) {
  try {
    await page.goto(`${origin}/iframe.html?id=${story.id}&viewMode=story`, { waitUntil: 'load' })
    const phase = await page
      .waitForFunction(
        () => {
          const render = globalThis.__STORYBOOK_PREVIEW__?.currentRender
          const phase = render?.phase
          if (document.body.classList.contains('sb-show-errordisplay')) return 'errordisplay'
          return ['completed', 'finished', 'errored', 'aborted'].includes(phase) ? phase : false
        },
        undefined,
        { timeout: 20_000, polling: 50 },
      )
      .then((handle) => handle.jsonValue())
    if (phase !== 'completed' && phase !== 'finished') {
      const message = await page.evaluate(
        () => document.querySelector('#error-message, .sb-errordisplay')?.textContent,
      )
      problems.push(`story ${phase}${message ? `: ${message.trim().slice(0, 400)}` : ''}`)
    }
    // Let transitions and a last round of effects settle before auditing.
    await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok, 150))))
    await page.addScriptTag({ content: axeSource })
    const violations = await page.evaluate(async () => {
      // Page-level rules judge the host page (Storybook's iframe), not a component, so they are off,
      // as in Storybook's own a11y addon. Every other rule, including colour contrast, applies.
      const result = await globalThis.axe.run(document, {
        resultTypes: ['violations'],
        rules: {
          region: { enabled: false },
          'landmark-one-main': { enabled: false },
          'page-has-heading-one': { enabled: false },
        },
      })
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes
          .slice(0, 3)
          .map((n) => `${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(0, 2).join(' ')}`),
      }))
    })
    for (const v of violations)
      problems.push(`axe ${v.id} (${v.impact}): ${v.help}\n      ${v.nodes.join('\n      ')}`)
    if (shotsDir) await page.screenshot({ path: join(shotsDir, `${story.id}.png`) })
    // The same state on a 320 px phone: nothing may stick out past its right edge.
    const viewport = page.viewportSize()
    await page.setViewportSize({ width: 320, height: viewport.height })
    await page.evaluate(() => new Promise((ok) => requestAnimationFrame(ok)))
    const { offenders: overflow } = await page.evaluate(pastRightEdge)
    if (overflow.length) problems.push(`wider than a 320 px screen: ${overflow.join(', ')}`)
    await page.setViewportSize(viewport)
  } catch (error) {
    problems.push(`failed: ${error.message.split('\n')[0]}`)
  }
}

const failures = []
const times = []
let done = 0
const queue = [...stories]
await Promise.all(
  Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
    // A context and a tab per worker, so its HTTP and code caches and its renderer process serve
    // the next story; everything a story can leave behind (IndexedDB keys, local and session
    // storage, cookies, service workers) is cleared before the next one (storyTab).
    const context = await browser.newContext({
      viewport: { width, height },
      reducedMotion: 'reduce',
    })
    const tab = await storyTab(context)
    while (queue.length) {
      const story = queue.shift()
      const storyStarted = Date.now()
      const problems = await tab.test(story)
      times.push({ id: story.id, seconds: (Date.now() - storyStarted) / 1000 })
      done += 1
      if (problems.length) failures.push({ story, problems })
      process.stdout.write(problems.length ? 'F' : '.')
    }
    await context.close()
  }),
)
await browser.close()
server.close()

console.log(
  `\n${done} stories in ${((Date.now() - started) / 1000).toFixed(1)} s, ${failures.length} failing`,
)
console.log(
  `slowest: ${times
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 8)
    .map((t) => `${t.id} ${t.seconds.toFixed(1)} s`)
    .join(', ')}`,
)
for (const { story, problems } of failures) {
  console.log(`\n✗ ${story.title} › ${story.name} (${story.id})`)
  for (const problem of problems) console.log(`    ${problem}`)
}
process.exit(failures.length ? 1 : 0)
