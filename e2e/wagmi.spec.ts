import { createPublicClient, http, verifyMessage } from 'viem'
import {
  expect,
  expectFitsPhone,
  expectNoAxeViolations,
  openPlayground,
  readOtpCode,
  stack,
  test,
  uniqueEmail,
} from './fixtures.ts'
import { enterOtp, signInDialog } from './flows.ts'

test('wagmi: sign-in connects wagmi without useConnect, useSendTransaction is mined, reload reconnects, sign-out disconnects', async ({
  page,
}) => {
  // Any error on the page fails the test: a React warning, a failed request, an uncaught throw.
  const errors: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  await openPlayground(page, 'default', '/wagmi')
  const status = page.getByTestId('wagmi-status')
  await expect(status).toHaveText('disconnected')

  // Sign in from the page; nothing on it calls useConnect.
  const account = page.getByRole('region', { name: 'useConnection()' })
  await account.getByRole('button', { name: 'Sign in' }).click()
  const dialog = signInDialog(page)
  const email = uniqueEmail('wagmi')
  const since = Date.now()
  await dialog.getByLabel('Email address').fill(email)
  await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
  await enterOtp(page, await readOtpCode(stack.services.default, email, since))
  // The connector gives the new user a wallet and wagmi connects while the dialog still shows.
  await expect(status).toHaveText('connected', { timeout: 20_000 })
  const address = (await page.getByTestId('wagmi-address').textContent())!.trim() as `0x${string}`
  expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
  await expect(page.getByTestId('wagmi-chain')).toHaveText('Local (anvil) (31337)')
  while ((await dialog.count()) > 0) {
    await page.keyboard.press('Escape')
    await page.waitForTimeout(200)
  }
  await expectNoAxeViolations(page, 'wagmi page, connected')

  // useSendTransaction: funded from the node's faucet account, signed by Latchkey, mined.
  const send = page.getByRole('region', { name: 'useSendTransaction()' })
  await send.getByRole('button', { name: 'Get 1 test ETH' }).click()
  await expect(send.getByTestId('wagmi-balance')).toHaveText('Balance: 1 ETH', { timeout: 20_000 })
  await send.getByLabel('Amount (ETH)').fill('0.25')
  await send.getByRole('button', { name: 'Send with wagmi' }).click()
  await expect(send.getByTestId('wagmi-receipt')).toContainText('✓ Mined', { timeout: 20_000 })
  const hash = (await send.getByTestId('wagmi-tx-hash').textContent())!.trim() as `0x${string}`
  const node = createPublicClient({ transport: http(stack.evm.url) })
  const receipt = await node.getTransactionReceipt({ hash })
  expect(receipt.status).toBe('success')
  expect(receipt.from.toLowerCase()).toBe(address.toLowerCase())
  expect(receipt.to?.toLowerCase()).toBe('0x000000000000000000000000000000000000dead')
  expect((await node.getTransaction({ hash })).value).toBe(250_000_000_000_000_000n)

  // useSignMessage: the page verifies with viem, and so do we here.
  const sign = page.getByRole('region', { name: 'useSignMessage()' })
  await sign.getByRole('button', { name: 'Sign with wagmi' }).click()
  await expect(sign.getByTestId('wagmi-signature-verified')).toBeVisible()
  const signature = (await sign.getByTestId('wagmi-signature').textContent())!.trim() as `0x${string}`
  expect(await verifyMessage({ address, message: 'Hello from wagmi and Latchkey', signature })).toBe(true)
  await expectFitsPhone(page, 'the wagmi page with its send and signature')

  // A reload with a live session reconnects wagmi, no prompt.
  await page.reload()
  await expect(status).toHaveText('connected', { timeout: 20_000 })
  await expect(page.getByTestId('wagmi-address')).toHaveText(address)
  await expect(dialog).toHaveCount(0)

  // Signing out of Latchkey (the header's button) disconnects wagmi.
  await page.getByRole('button', { name: 'Sign out' }).click()
  await expect(status).toHaveText('disconnected')
  await expect(page.getByTestId('wagmi-address')).toHaveText('—')
  expect(errors).toEqual([])
})
