import { eip191Signer, recoverAddressTyped } from 'micro-eth-signer'
import { expect, expectFitsPhone, expectNoAxeViolations, stack, test } from './fixtures.ts'
import { addressesOf, createWallet, signInWithEmail, walletsCard } from './flows.ts'

test('wallets: create a wallet, add accounts per chain, sign and verify, delete it', async ({ page }) => {
  await signInWithEmail(page)
  const wallets = walletsCard(page)
  await expect(wallets.getByText('No wallets yet')).toBeVisible()
  await expectNoAxeViolations(page, 'empty wallet list')

  const wallet = await createWallet(page, 'Main')
  const [ethereum] = await addressesOf(wallet, 'Ethereum')
  expect(ethereum).toMatch(/^0x[0-9a-fA-F]{40}$/)
  expect(await addressesOf(wallet, 'Solana')).toHaveLength(1)

  // One more account on Bitcoin, one more on Ethereum.
  await wallet.getByLabel('Add an account on').selectOption('bitcoin')
  await wallet.getByRole('button', { name: 'Add account' }).click()
  await expect(wallet.getByRole('listitem')).toHaveCount(3)
  expect((await addressesOf(wallet, 'Bitcoin'))[0]).toMatch(/^bc1q/)
  await wallet.getByLabel('Add an account on').selectOption('ethereum')
  await wallet.getByRole('button', { name: 'Add account' }).click()
  await expect(wallet.getByRole('listitem')).toHaveCount(4)
  const ethereumAccounts = await addressesOf(wallet, 'Ethereum')
  expect(new Set(ethereumAccounts).size).toBe(2)
  await expectNoAxeViolations(page, 'wallet with accounts')

  // Sign a message; the playground verifies it, and so do we, here in Node.
  const sign = page.getByRole('region', { name: 'Sign', exact: true })
  await expect(sign.getByLabel('Ethereum account')).toHaveValue(ethereum!)
  const message = `e2e ${Date.now()}`
  await sign.getByLabel('Message').fill(message)
  await sign.getByRole('button', { name: 'Sign message' }).click()
  await expect(sign.getByTestId('signature-verified')).toBeVisible()
  const signature = (await sign.getByTestId('signature').textContent())!.trim()
  expect(eip191Signer.recoverAddress(signature, message).toLowerCase()).toBe(ethereum!.toLowerCase())

  // EIP-712 typed data, with the second Ethereum account.
  const second = ethereumAccounts.find((a) => a !== ethereum)!
  await sign.getByLabel('Ethereum account').selectOption(second)
  await sign.getByRole('tab', { name: 'Typed data (EIP-712)' }).click()
  await sign.getByRole('button', { name: 'Sign typed data' }).click()
  await expect(sign.getByTestId('signature-verified')).toBeVisible()
  await expect(sign.getByTestId('recovered-signer')).toHaveText(new RegExp(second, 'i'))
  const typedSignature = (await sign.getByTestId('signature').textContent())!.trim()
  const typedData = {
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
      ],
      Mail: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'contents', type: 'string' },
      ],
    },
    primaryType: 'Mail',
    domain: { name: 'Latchkey Playground', version: '1', chainId: stack.evm.chainId },
    message: {
      from: second,
      to: '0x000000000000000000000000000000000000dEaD',
      contents: 'Hello from the Latchkey playground',
    },
  } as const
  expect(recoverAddressTyped(typedSignature, typedData as never).toLowerCase()).toBe(second.toLowerCase())

  // Delete: never exported, so the confirmation asks for an explicit acknowledgement.
  await wallets.getByRole('button', { name: 'Delete wallet: Main' }).click()
  const remove = wallet.getByRole('button', { name: 'Delete wallet', exact: true })
  await expect(remove).toBeDisabled()
  await expectNoAxeViolations(page, 'delete confirmation')
  await wallet.getByLabel('I understand this can’t be undone').check()
  await remove.click()
  await expect(wallets.getByRole('article', { name: 'Main' })).toHaveCount(0)
  await expect(wallets.getByText('No wallets yet')).toBeVisible()
})

test('send: fund a new Ethereum account from the faucet and send ETH with viem and the Latchkey account', async ({
  page,
}) => {
  await signInWithEmail(page)
  const wallet = await createWallet(page, 'Spending')
  const [from] = await addressesOf(wallet, 'Ethereum')
  const send = page.getByRole('region', { name: 'Send a transaction' })
  await expect(send.getByTestId('balance')).toHaveText('Balance: 0 ETH')
  await send.getByRole('button', { name: 'Get 1 test ETH' }).click()
  await expect(send.getByTestId('balance')).toHaveText('Balance: 1 ETH', { timeout: 20_000 })
  await send.getByLabel('Amount (ETH)').fill('0.25')
  await send.getByRole('button', { name: 'Send', exact: true }).click()
  await expect(send.getByText(/✓ Mined in block/)).toBeVisible({ timeout: 30_000 })
  const hash = (await send.getByTestId('tx-hash').textContent())!.trim()

  // The node agrees: mined, from this account, 0.25 ETH to the recipient.
  const rpc = async (method: string, params: unknown[]) => {
    const response = await fetch(stack.evm.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    })
    return ((await response.json()) as { result: Record<string, string> }).result
  }
  const receipt = await rpc('eth_getTransactionReceipt', [hash])
  expect(receipt.status).toBe('0x1')
  expect(receipt.from!.toLowerCase()).toBe(from!.toLowerCase())
  const transaction = await rpc('eth_getTransactionByHash', [hash])
  expect(BigInt(transaction.value!)).toBe(250_000_000_000_000_000n)
  // viem built an EIP-1559 transaction; the service signed it (sign_transaction).
  expect(transaction.type).toBe('0x2')
  await expect(send.getByTestId('tx-type')).toHaveText('eip1559')
  await expectFitsPhone(page, 'the wallets page after the test')
})
