import { createPublicClient, erc20Abi, http } from 'viem'
import { expect, expectFitsPhone, openPlayground, readOtpCode, stack, test, uniqueEmail } from './fixtures.ts'
import { enterOtp, signInDialog } from './flows.ts'

test('wagmi: a new user with no ETH sends a sponsored approve + transfer with useSendCalls; useCallsStatus reaches success', async ({
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
  await page.getByRole('region', { name: 'useConnection()' }).getByRole('button', { name: 'Sign in' }).click()
  const dialog = signInDialog(page)
  const email = uniqueEmail('sendcalls')
  const since = Date.now()
  await dialog.getByLabel('Email address').fill(email)
  await dialog.getByRole('button', { name: 'Continue', exact: true }).click()
  await enterOtp(page, await readOtpCode(stack.services.default, email, since))
  await expect(status).toHaveText('connected', { timeout: 20_000 })
  const address = (await page.getByTestId('wagmi-address').textContent())!.trim() as `0x${string}`
  while ((await dialog.count()) > 0) {
    await page.keyboard.press('Escape')
    await page.waitForTimeout(200)
  }

  const batch = page.getByRole('region', { name: 'useSendCalls() — sponsored' })
  await expect(batch.getByTestId('wagmi-batch-eth')).toHaveText('ETH: 0')
  await batch.getByRole('button', { name: 'Deploy a test token and mint 100 LKT to me' }).click()
  await expect(batch.getByTestId('wagmi-batch-tokens')).toHaveText('LKT: 100', { timeout: 20_000 })
  await batch.getByRole('button', { name: 'Approve and transfer 10 LKT, sponsored' }).click()
  await expect(batch.getByTestId('wagmi-calls-status')).toHaveText('success', { timeout: 30_000 })
  // The balances are read again once the batch is in: 10 LKT left.
  await expect(batch.getByTestId('wagmi-batch-tokens')).toHaveText('LKT: 90')

  // Both calls ran, in one transaction the sponsor paid: the user still holds no ETH.
  const node = createPublicClient({ transport: http(stack.evm.url) })
  expect(await node.getBalance({ address })).toBe(0n)
  const hash = (await batch.getByText(/^0x[0-9a-f]{64}$/).textContent())!.trim() as `0x${string}`
  const receipt = await node.getTransactionReceipt({ hash })
  expect(receipt.status).toBe('success')
  expect(receipt.from.toLowerCase()).not.toBe(address.toLowerCase())
  // The token's Approval and Transfer logs; the account's own (the delegate's BatchExecuted) is not it.
  const token = receipt.logs.find((log) => log.address.toLowerCase() !== address.toLowerCase())
    ?.address as `0x${string}`
  expect(
    await node.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address] }),
  ).toBe(90n * 10n ** 18n)
  expect(
    await node.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [address, '0x000000000000000000000000000000000000dEaD'],
    }),
  ).toBe(10n * 10n ** 18n)
  expect(errors).toEqual([])
  await expectFitsPhone(page, 'the send-calls page after the test')
})
