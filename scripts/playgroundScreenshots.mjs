// `npm run playground:screenshots [outDir]`: walks the playground (sign-up by e-mail OTP, wallet,
// sign, send, export, import, second session, agent page, operator page) at 1280 px and 375 px and saves a
// PNG per step (default /tmp/shots/playground-*.png), for the README and for looking at.

import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { chromium } from 'playwright-core'
import { chromiumLaunchOptions } from './chromium.mjs'
import {
  freePort,
  fundSponsor,
  playgroundConfig,
  root,
  sponsorArgs,
  startEvmNode,
  startPlayground,
  startService,
} from './devStack.mjs'

const outDir = path.resolve(process.argv[2] ?? '/tmp/shots')
mkdirSync(outDir, { recursive: true })
execFileSync('bash', [path.join(root, 'scripts/ensure-chromium.sh')], { stdio: 'inherit' })
const evm = await startEvmNode({})
const port = await freePort()
// The stack `npm start` runs: sends on the node, sponsored ones through the delegate (the agent page's).
const service = await startService({
  args: ['--rpc', `${evm.caip2}=${evm.url}`, ...(await sponsorArgs(evm))],
  log: () => {},
})
await fundSponsor(evm, service)
const pg = await startPlayground({
  config: playgroundConfig({ services: { default: service }, evm }),
  port,
  mode: 'preview',
  strictPort: true,
})
const browser = await chromium.launch(chromiumLaunchOptions)
const errors = []
async function tour(width, prefix) {
  const ctx = await browser.newContext({ viewport: { width, height: 900 } })
  const page = await ctx.newPage()
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    // The agent page's refusals are 429s by design (SPENDING_LIMIT_EXCEEDED); Chromium logs each.
    if (m.type() === 'error' && !m.text().includes('status of 429')) errors.push(m.text())
  })
  const shot = (n, full = true) =>
    page.screenshot({ path: `${outDir}/playground-${prefix}${n}.png`, fullPage: full })
  await page.goto(pg.url)
  await page.waitForTimeout(800)
  await shot('01-landing')
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForTimeout(600)
  await shot('02-signin-modal', false)
  const email = `ada-${Date.now()}@example.test`
  await page.getByLabel('Email address').fill(email)
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByRole('textbox', { name: 'Digit 1 of 6' }).waitFor()
  await page.waitForTimeout(2500)
  await shot('03-otp-with-dev-code', false)
  const out = await (await fetch(service.baseUrl + '/dev/outbox')).json()
  const code = out.messages.filter((m) => m.contact === email).at(-1).code
  await page.getByRole('textbox', { name: 'Digit 1 of 6' }).click()
  await page.keyboard.type(code)
  await page.getByRole('button', { name: 'Not now' }).waitFor()
  await page.waitForTimeout(400)
  await shot('04-passkey-offer', false)
  // Declining the offer ends the flow: the modal closes itself.
  await page.getByRole('button', { name: 'Not now' }).click()
  await page.getByRole('dialog').waitFor({ state: 'hidden' })
  await page.waitForTimeout(1000)
  await shot('06-dashboard-empty')
  const wallets = page.getByRole('region', { name: 'Wallets', exact: true })
  await wallets.getByRole('button', { name: 'Create wallet' }).first().click()
  await wallets
    .getByRole('form', { name: 'Create wallet' })
    .getByRole('button', { name: 'Create wallet' })
    .click()
  await wallets.getByRole('article').first().waitFor()
  await page.waitForTimeout(1200)
  const sign = page.getByRole('region', { name: 'Sign', exact: true })
  await sign.getByRole('button', { name: 'Sign message' }).click()
  await sign.getByTestId('signature-verified').waitFor()
  const send = page.getByRole('region', { name: 'Send a transaction' })
  await send.getByRole('button', { name: 'Get 1 test ETH' }).click()
  await send.getByText('Balance: 1 ETH').waitFor()
  await send.getByRole('button', { name: 'Send', exact: true }).click()
  await send.getByText(/Mined/).waitFor({ timeout: 30000 })
  await page.waitForTimeout(500)
  await shot('07-dashboard-wallet-signed-sent')
  await sign.getByRole('tab', { name: 'Typed data (EIP-712)' }).click()
  await sign.getByRole('button', { name: 'Sign typed data' }).click()
  await sign.getByTestId('signature-verified').waitFor()
  await sign.screenshot({ path: `${outDir}/playground-${prefix}08-typed-data.png` })
  const backup = page.getByRole('region', { name: 'Back up and restore' })
  await backup.getByRole('button', { name: 'Export recovery phrase' }).click()
  await page.waitForTimeout(500)
  await shot('09-export-warning', false)
  await page.getByLabel('I understand and I’m in a private place').check()
  await page.getByRole('button', { name: 'Reveal recovery phrase' }).click()
  await page.frameLocator('iframe').first().getByRole('listitem').first().waitFor()
  await page.waitForTimeout(600)
  await shot('10-export-revealed', false)
  await page.getByRole('dialog', { name: 'Export wallet' }).getByRole('button', { name: 'Done' }).click()
  await backup.getByRole('button', { name: 'Import wallet' }).click()
  await page.waitForTimeout(1500)
  await shot('11-import', false)
  await page.keyboard.press('Escape')
  // The agent page: grant the in-page agent 0.01 ETH a day to one address, let it overspend.
  await page.getByRole('navigation', { name: 'Playground' }).getByRole('link', { name: 'Agent' }).click()
  const allowance = page.getByRole('region', { name: 'Agent allowances' })
  await allowance.getByRole('button', { name: 'Grant an allowance' }).click()
  const grant = allowance.getByRole('form', { name: 'Grant an allowance' })
  await grant.getByLabel('Amount (ETH)').fill('0.01')
  await grant
    .getByLabel('Only to these addresses (optional)')
    .fill('0x00000000000000000000000000000000000f00d5')
  await shot('15-agent-grant')
  await grant.getByRole('button', { name: 'Grant an allowance' }).click()
  await allowance.getByText('0.01 ETH left today').waitFor({ timeout: 20000 })
  const run = page.getByRole('region', { name: 'The agent tries to overspend' })
  await run.getByRole('button', { name: 'Run the agent' }).click()
  await allowance.getByText('Limit reached').waitFor({ timeout: 60000 })
  await page.waitForTimeout(500)
  await shot('16-agent-overspent')
  await page.getByRole('navigation', { name: 'Playground' }).getByRole('link', { name: 'App' }).click()
  await page.getByRole('button', { name: 'Add another account' }).click()
  const email2 = `grace-${Date.now()}@example.test`
  await page.getByLabel('Email address').fill(email2)
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByRole('textbox', { name: 'Digit 1 of 6' }).waitFor()
  await page.waitForTimeout(1500)
  const out2 = await (await fetch(service.baseUrl + '/dev/outbox')).json()
  await page.getByRole('textbox', { name: 'Digit 1 of 6' }).click()
  await page.keyboard.type(out2.messages.filter((m) => m.contact === email2).at(-1).code)
  await page.getByRole('button', { name: 'Not now' }).click()
  await page.waitForTimeout(1200)
  await page
    .getByRole('region', { name: 'Sessions in this browser' })
    .screenshot({ path: `${outDir}/playground-${prefix}12-two-sessions.png` })
  await page
    .getByRole('region', { name: 'Profile' })
    .screenshot({ path: `${outDir}/playground-${prefix}13-profile.png` })
  await page.getByRole('link', { name: 'Operator' }).click()
  await page.getByRole('form', { name: 'Authentication settings' }).waitFor()
  await page.waitForTimeout(500)
  await shot('14-operator')
  await ctx.close()
}
let failed = false
try {
  await tour(1280, '')
  await tour(375, 'mobile-')
  process.stdout.write(`screenshots in ${outDir}\n`)
} catch (error) {
  failed = true
  process.stderr.write(`the tour failed: ${error.message}\n`)
}
if (errors.length) process.stderr.write(`page errors: ${JSON.stringify(errors.slice(0, 10))}\n`)
await browser.close()
await pg.close()
await service.close()
await evm.close()
process.exit(failed || errors.length ? 1 : 0)
