import {
  type Address,
  getBase64Encoder,
  getPublicKeyFromAddress,
  getTransactionDecoder,
  lamports,
  verifySignature,
} from '@solana/kit'
import { FailedTransactionMetadata, LiteSVM } from 'litesvm'
import { expect, expectFitsPhone, expectNoAxeViolations, test } from './fixtures.ts'
import { signInWithEmail } from './flows.ts'

test('solana: a transfer signed in the browser by the kit signer verifies, and LiteSVM executes it', async ({
  page,
}) => {
  await signInWithEmail(page)
  await page.getByRole('navigation', { name: 'Playground' }).getByRole('link', { name: 'Solana' }).click()
  const panel = page.getByRole('region', { name: 'Solana transfer' })
  await expect(panel.getByText('You have no Solana account yet.')).toBeVisible()
  await panel.getByRole('button', { name: 'Create a Solana wallet' }).click()
  const account = panel.getByLabel('Solana account')
  await expect(account).toBeVisible({ timeout: 20_000 })
  const address = (await account.inputValue()) as Address
  const recipient = (await panel.getByLabel('Recipient').inputValue()) as Address
  await panel.getByLabel('Amount (SOL)').fill('0.25')
  await panel.getByRole('button', { name: 'Sign transfer' }).click()
  await expect(panel.getByTestId('solana-verified')).toBeVisible()
  await expectNoAxeViolations(page, 'solana transfer signed')

  // Check it again here, in Node, from the wire bytes the page shows.
  const wire = (await panel.getByTestId('solana-wire-transaction').textContent())!.trim()
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire))
  const signature = transaction.signatures[address]
  expect(signature).toBeTruthy()
  expect(
    await verifySignature(await getPublicKeyFromAddress(address), signature!, transaction.messageBytes),
  ).toBe(true)

  // No Solana node runs in the stack, so the page used a stand-in blockhash: a LiteSVM that skips
  // only the blockhash check (signatures are still verified) executes the transfer.
  const svm = new LiteSVM().withBlockhashCheck(false)
  svm.airdrop(address, lamports(1_000_000_000n))
  const outcome = svm.sendTransaction(transaction as Parameters<LiteSVM['sendTransaction']>[0])
  if (outcome instanceof FailedTransactionMetadata) throw new Error(`LiteSVM refused it: ${outcome.err()}`)
  expect(svm.getBalance(recipient)).toBe(250_000_000n)
  await expectFitsPhone(page, 'the solana page after the test')
})
