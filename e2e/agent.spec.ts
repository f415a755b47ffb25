// Issue 37 end to end: the user signs in by e-mail, grants the playground's in-page agent 0.01 ETH a
// day to one address with <AgentAllowance/>, and the agent fires 8 sends of 0.002 ETH at once with
// its own key. The service signs exactly five (0.01 ETH), refuses three with
// SPENDING_LIMIT_EXCEEDED, and counts exactly the limit as used.
import { expect, expectNoAxeViolations, expectNoHorizontalScroll, test } from './fixtures.ts'
import { createWallet, signInWithEmail } from './flows.ts'

const SHOP = '0x00000000000000000000000000000000000f00d5'

test('agent allowance: parallel sends over a 0.01 ETH daily allowance spend exactly 0.01 ETH', async ({
  page,
}) => {
  await signInWithEmail(page)
  const nav = page.getByRole('navigation', { name: 'Playground' })
  // Without a wallet the page says where to make one, and links there.
  await nav.getByRole('link', { name: 'Agent' }).click()
  await page.getByRole('link', { name: 'create an Ethereum wallet on the App page' }).click()
  await expect(page).toHaveURL(/\/$/)
  await createWallet(page, 'Main')
  await nav.getByRole('link', { name: 'Agent' }).click()
  await expect(page.getByTestId('agent-public-key')).toHaveText(/^0[23][0-9a-f]{64}$/)
  const allowance = page.getByRole('region', { name: 'Agent allowances' })
  await expect(allowance.getByText('No agent has an allowance.')).toBeVisible()

  await allowance.getByRole('button', { name: 'Grant an allowance' }).click()
  const form = allowance.getByRole('form', { name: 'Grant an allowance' })
  await form.getByLabel('Amount (ETH)').fill('0.01')
  await form.getByLabel('Only to these addresses (optional)').fill(SHOP)
  await form.getByRole('button', { name: 'Grant an allowance' }).click()
  await expect(allowance.getByText('0.01 ETH left today')).toBeVisible({ timeout: 20_000 })
  await expect(allowance.getByText('0 ETH of 0.01 ETH')).toBeVisible()
  await expectNoAxeViolations(page, 'agent allowance granted')

  const run = page.getByRole('region', { name: 'The agent tries to overspend' })
  await run.getByRole('button', { name: 'Run the agent' }).click()
  await expect(run.getByTestId('agent-send')).toHaveCount(8, { timeout: 60_000 })
  await expect(run.getByTestId('agent-signed')).toHaveText('5')
  await expect(run.getByTestId('agent-refused')).toHaveText('3')
  const refused = run.locator('[data-testid="agent-send"][data-state="refused"]')
  await expect(refused).toHaveCount(3)
  for (const item of await refused.all()) await expect(item).toContainText('SPENDING_LIMIT_EXCEEDED')
  // Each signed send by its mined transaction's hash (the sponsor broadcast it), not its status id.
  for (const item of await run.locator('[data-testid="agent-send"][data-state="signed"]').all())
    await expect(item).toContainText(/signed \(transaction 0x[0-9a-f]{64}\)/)
  await expect(run.getByTestId('agent-total')).toHaveText('0.01 ETH')
  await expect(run.getByTestId('agent-used')).toHaveText('0.01 of 0.01 ETH')
  await expect(allowance.getByText('Limit reached')).toBeVisible()
  await expectNoAxeViolations(page, 'agent after overspending')
  // The sends, their hashes and the allowance's row fit a 320 px phone.
  await page.setViewportSize({ width: 320, height: 812 })
  await expectNoHorizontalScroll(page, 'the agent page after the run, at 320 px')
  await page.setViewportSize({ width: 1280, height: 800 })
  const agentKey = await page.getByTestId('agent-public-key').textContent()

  // Reloaded, the page finds the same agent (its key kept in this browser) and its allowance, and
  // the agent, run again, spends nothing more.
  await page.reload()
  await expect(page.getByTestId('agent-public-key')).toHaveText(agentKey ?? '')
  await expect(allowance.getByText('Limit reached')).toBeVisible({ timeout: 20_000 })
  await run.getByRole('button', { name: 'Run the agent' }).click()
  await expect(run.getByTestId('agent-send')).toHaveCount(8, { timeout: 60_000 })
  await expect(run.getByTestId('agent-signed')).toHaveText('0')
  await expect(run.getByTestId('agent-used')).toHaveText('0.01 of 0.01 ETH')
  await expect(run.getByRole('list', { name: 'Sends' })).toBeFocused()
})
