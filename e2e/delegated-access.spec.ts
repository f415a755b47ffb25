// The delegated-access recipe end to end: the end user signs up in the browser and grants the app's
// back end (a Node client of latchkey/core with an API key, examples/delegated-access.ts) "may sign
// ETH transfers to X only"; the back end's transfer to X is signed and mined on the local node, its
// transfer to Y is refused with OUTCOME_DENY_IMPLICIT (and 2 ETH to X with OUTCOME_DENY_EXPLICIT by
// the grant's limit, 1 wei to X at a fee above the grant's ceiling with OUTCOME_DENY_IMPLICIT), and
// get_policy_evaluations shows them, in Node and on the playground's activity view.
import { bytesToHex, randomBytes } from '@noble/hashes/utils.js'
import { getPolicyEvaluations, signTransaction, submit } from 'latchkey/core'
import { serializeTransaction } from 'viem'
import { backendClient, newBackendKey, refusalOf } from '../examples/delegated-access.ts'
import { expect, expectFitsPhone, expectNoAxeViolations, stack, test } from './fixtures.ts'
import { addressesOf, createWallet, signInWithEmail } from './flows.ts'

async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(stack.evm.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  })
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}

async function mined(hash: string): Promise<{ status: string }> {
  for (let i = 0; i < 100; i++) {
    const receipt = await rpc<{ status: string } | null>('eth_getTransactionReceipt', [hash])
    if (receipt) return receipt
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`transaction ${hash} was not mined`)
}

const ETHER = 10n ** 18n

test('delegated access: the back end signs what the policy allows and nothing else', async ({ page }) => {
  // The end user signs up in the browser and makes a wallet; the node's dev account funds it.
  await signInWithEmail(page)
  const [from] = await addressesOf(await createWallet(page, 'Main'), 'Ethereum')
  const [faucet] = await rpc<string[]>('eth_accounts')
  await mined(
    await rpc<string>('eth_sendTransaction', [{ from: faucet, to: from, value: `0x${ETHER.toString(16)}` }]),
  )

  // The end user grants the back end's key "may sign ETH transfers to X only" in the playground.
  const key = newBackendKey()
  const x = `0x${bytesToHex(randomBytes(20))}`
  const y = `0x${bytesToHex(randomBytes(20))}`
  await page.getByRole('link', { name: 'Open the delegated-access demo' }).click()
  const grant = page.getByRole('region', { name: 'Grant your app’s back end access' })
  await grant.getByLabel('Back-end public key').fill(key.publicKey)
  await grant.getByLabel('Allowed recipient').fill(x)
  await grant.getByRole('button', { name: 'Grant access' }).click()
  const organizationId = (await grant.getByTestId('delegated-organization').textContent())!.trim()
  const userId = (await grant.getByTestId('delegated-user').textContent())!.trim()
  const policies = page.getByRole('region', { name: 'Policies' })
  await expect(policies.getByRole('listitem')).toHaveCount(2)
  await expectNoAxeViolations(page, 'delegated access with policies')

  // The back end, in Node, with its API key only.
  const service = stack.services.default
  const backend = await backendClient({
    baseUrl: service.baseUrl,
    authProxyConfigId: service.authProxyConfigId,
    organizationId,
    userId,
    privateKeyHex: key.privateKeyHex,
  })
  const nonce = Number(BigInt(await rpc<string>('eth_getTransactionCount', [from, 'pending'])))
  const unsigned = (to: string, value: bigint, fee = { max: 20n * 10n ** 9n, priority: 10n ** 9n }) =>
    serializeTransaction({
      type: 'eip1559',
      chainId: stack.evm.chainId,
      nonce,
      gas: 21000n,
      maxFeePerGas: fee.max,
      maxPriorityFeePerGas: fee.priority,
      to: to as `0x${string}`,
      value,
    })
  const toX = await submit(backend, 'sign_transaction', {
    signWith: from!,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: unsigned(x, ETHER / 100n),
  })
  const receipt = await mined(
    await rpc<string>('eth_sendRawTransaction', [`0x${toX.result.signedTransaction}`]),
  )
  expect(receipt.status).toBe('0x1')
  expect(BigInt(await rpc<string>('eth_getBalance', [x, 'latest']))).toBe(ETHER / 100n)

  const refusal = await signTransaction(backend, {
    signWith: from!,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: unsigned(y, ETHER / 100n),
  }).then(
    () => undefined,
    (error: unknown) => refusalOf(error),
  )
  expect(refusal?.outcome).toBe('OUTCOME_DENY_IMPLICIT')
  expect(BigInt(await rpc<string>('eth_getBalance', [y, 'latest']))).toBe(0n)
  // The grant's default DENY policy refuses more than 1 ETH, even to X.
  const tooMuch = await signTransaction(backend, {
    signWith: from!,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: unsigned(x, 2n * ETHER),
  }).then(
    () => undefined,
    (error: unknown) => refusalOf(error),
  )
  expect(tooMuch?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
  // 1 wei to X whose fee (100,000 gwei a gas, 2.1 ETH) goes to the block's producer: above the
  // grant's fee ceiling (the form's 100 gwei), so no policy allows it.
  const feeDrain = await signTransaction(backend, {
    signWith: from!,
    type: 'TRANSACTION_TYPE_ETHEREUM',
    unsignedTransaction: unsigned(x, 1n, { max: 10n ** 14n, priority: 10n ** 14n }),
  }).then(
    () => undefined,
    (error: unknown) => refusalOf(error),
  )
  expect(feeDrain?.outcome).toBe('OUTCOME_DENY_IMPLICIT')

  const decision = async (activityId: string) =>
    (await getPolicyEvaluations(backend, { activityId })).policyEvaluations.map((e) => e.policyEvaluations)
  const allowed = await decision(toX.activity.id)
  expect(allowed[0]![0]).toEqual({ outcome: 'OUTCOME_ALLOW' })
  expect(allowed[0]!.map((entry) => entry.outcome)).toContain('OUTCOME_ALLOW')
  const refused = await decision(refusal!.activityId)
  expect(refused[0]![0]).toEqual({ outcome: 'OUTCOME_DENY_IMPLICIT' })
  expect(refused[0]!.slice(1).every((entry) => entry.outcome === 'OUTCOME_DENY_IMPLICIT')).toBe(true)

  // The end user sees both decisions in the playground's activity view.
  const view = page.getByRole('region', { name: 'Activity', exact: true })
  for (const [activityId, outcome] of [
    [refusal!.activityId, 'OUTCOME_DENY_IMPLICIT'],
    [tooMuch!.activityId, 'OUTCOME_DENY_EXPLICIT'],
    [toX.activity.id, 'OUTCOME_ALLOW'],
  ] as const) {
    await view.getByLabel('Activity id').fill(activityId)
    await view.getByRole('button', { name: 'Show' }).click()
    await expect(view.getByTestId('decision')).toHaveText(outcome)
    await expect(view.getByRole('table', { name: 'Policy outcomes' }).getByRole('row')).toHaveCount(3)
  }
  await expectNoAxeViolations(page, 'delegated access activity view')
  await expectFitsPhone(page, 'the delegated-access page after the test')
})
