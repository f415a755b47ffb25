// "Sends above an amount need a passkey" and a call from the account to itself: once the account
// delegates to the kit's own delegate (contracts/LatchkeyDelegate.sol; any batch or sponsored send
// puts it there, and a batch of two calls of value 0 passes the rule at once), a call of value 0
// from the account to the account runs `execute(0x01…, calls)` (ERC-7821: no signature when
// msg.sender == address(this)), which makes any calls with any value. The rule holds such a call,
// in a send or a signed transaction of any type, whatever its own value.
import { serializeTransaction } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { encodeSelfExecuteBatch } from '../../../packages/service/src/sending/delegate/index.ts'
import { sendCalls } from '../../core/actions/activities/sendCalls.ts'
import { signTransaction } from '../../core/actions/activities/signTransaction.ts'
import { ETH, held, sendsRuleOnChain } from '../test/sendsRuleOnChain.ts'

const GWEI = 10n ** 9n
const { chain, balance, setUp } = sendsRuleOnChain()

/** What an attempt did: the coin it moved to `thief`, whether the passkey was used, its refusal. */
async function outcome(thief: string, passkeyUsed: boolean, attempt: () => Promise<unknown>) {
  let refusal: unknown
  try {
    await attempt()
  } catch (error) {
    refusal = error
  }
  return { stolen: await balance(thief), passkeyUsed, refusal: (refusal as { code?: string })?.code }
}

const stopped = { stolen: 0n, passkeyUsed: false, refusal: 'MFA_REQUIRED' }

describe('sends rule: a call from the account to itself runs the delegate', () => {
  it('eth_send_transaction: a call {to: the account, value 0, data: execute(batch paying 0.5 ETH)} is held', async () => {
    const THIEF = '0x00000000000000000000000000000000000bad11'
    const { client, from, passkeyUses, waitFor } = await setUp()
    const before = passkeyUses()
    // Control: the same 0.5 ETH sent directly is held.
    await expect(
      sendCalls(client, { from, caip2: 'eip155:31337', calls: [{ to: THIEF, value: String(ETH / 2n) }] }),
    ).rejects.toMatchObject(held)

    const data = encodeSelfExecuteBatch([{ to: THIEF, value: ETH / 2n, data: '0x' }])
    const send = (calls: { to: string; value: string; data?: string }[]) => async () =>
      waitFor((await sendCalls(client, { from, caip2: 'eip155:31337', calls })).sendTransactionStatusId)
    // Alone, or as one call of a batch of otherwise harmless calls.
    const alone = await outcome(THIEF, false, send([{ to: from, value: '0', data }]))
    const inBatch = await outcome(
      THIEF,
      false,
      send([
        { to: '0x00000000000000000000000000000000000000f3', value: '0' },
        { to: from, value: '0', data },
      ]),
    )
    expect({ alone, inBatch, passkeyUsed: passkeyUses() > before }).toEqual({
      alone: stopped,
      inBatch: stopped,
      passkeyUsed: false,
    })
    // A call to itself without calldata runs no function (a transfer to itself): it passes.
    expect(await send([{ to: from, value: '0' }])()).toBe('success')
  })

  it('sign_transaction: value 0, 200,000 gas at 5 gwei, to the account with execute(batch paying 0.5 ETH) is held, EIP-1559 or EIP-7702', async () => {
    const THIEF = '0x00000000000000000000000000000000000bad12'
    const THIEF_7702 = '0x00000000000000000000000000000000000bad13'
    const { client, from, passkeyUses } = await setUp()
    // Enough for both attempts to pay out if signed.
    await chain.node.rpc('anvil_setBalance', [from, `0x${(2n * ETH).toString(16)}`])
    const before = passkeyUses()
    const fees = async () => ({
      chainId: 31337,
      nonce: Number(BigInt((await chain.node.rpc('eth_getTransactionCount', [from, 'pending'])) as string)),
      gas: 200_000n,
      maxFeePerGas: 5n * GWEI,
      maxPriorityFeePerGas: GWEI,
    })
    const tx = async (to: `0x${string}`, value: bigint, data: `0x${string}`) =>
      serializeTransaction({ type: 'eip1559', ...(await fees()), to, value, data })
    const sign = (unsignedTransaction: string) =>
      signTransaction(client, { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction })
    // Control: a 0.5 ETH transfer at the same fees is held.
    await expect(sign(await tx(THIEF, ETH / 2n, '0x'))).rejects.toMatchObject(held)

    const payTo = (thief: string) =>
      encodeSelfExecuteBatch([{ to: thief, value: ETH / 2n, data: '0x' }]) as `0x${string}`
    const signAndSend = (unsigned: () => Promise<string>) => async () => {
      const { signedTransaction } = (await sign(await unsigned())) as { signedTransaction: string }
      // Whoever holds it broadcasts it.
      await chain.node.rpc('eth_sendRawTransaction', [`0x${signedTransaction.replace(/^0x/, '')}`])
      await chain.node.rpc('anvil_mine', [])
    }
    const eip1559 = await outcome(
      THIEF,
      false,
      signAndSend(() => tx(from, 0n, payTo(THIEF))),
    )
    // An EIP-7702 transaction (type 4) to the account runs the same code; its authorization list
    // carries authorizations signed apart (here one of another key's, for the delegate).
    const other = privateKeyToAccount(`0x${'42'.repeat(32)}`)
    const authorization = await other.signAuthorization({
      chainId: 31337,
      address: chain.delegate as `0x${string}`,
      nonce: 0,
    })
    const eip7702 = await outcome(
      THIEF_7702,
      false,
      signAndSend(async () =>
        serializeTransaction({
          type: 'eip7702',
          ...(await fees()),
          to: from,
          value: 0n,
          data: payTo(THIEF_7702),
          authorizationList: [authorization],
        }),
      ),
    )
    expect({ eip1559, eip7702, passkeyUsed: passkeyUses() > before }).toEqual({
      eip1559: stopped,
      eip7702: stopped,
      passkeyUsed: false,
    })
    // A transaction to itself without calldata (a nonce's cancellation) passes.
    await expect(sign(await tx(from, 0n, '0x'))).resolves.toBeTruthy()
  })

  it('eth_send_transaction of value 0 whose fee, set by the caller, may pass the amount is held; a cheap send under the amount passes', async () => {
    const BURNER = '0x00000000000000000000000000000000000b0e01'
    // JUMPDEST GAS PUSH2 5000 LT PUSH1 0 JUMPI STOP: burns gas until 5,000 is left, then succeeds.
    await chain.node.rpc('anvil_setCode', [BURNER, '0x5b5a6113881060005700'])
    const { client, from, passkeyUses, waitFor } = await setUp()
    await chain.node.rpc('anvil_setBalance', [from, `0x${(2n * ETH).toString(16)}`])
    const before = passkeyUses()
    const start = await balance(from)
    // 1,000,000 gas at 1,000 gwei: up to 1 ETH of fee, nearly all tip to the block's producer,
    // under a 0.1 ETH rule. Each call's `eth.tx` carries the gas and the most fee per gas the
    // service signs its transaction with, so the rule bounds value plus fee as for a signed one.
    const send = (calls: { to: string; value: string }[], fees: Record<string, string>) => async () =>
      waitFor(
        (await sendCalls(client, { from, caip2: 'eip155:31337', calls, ...fees } as never))
          .sendTransactionStatusId,
      )
    const costly = {
      gasLimit: '1000000',
      maxFeePerGas: String(1_000n * GWEI),
      maxPriorityFeePerGas: String(1_000n * GWEI),
    }
    const alone = await outcome(BURNER, false, send([{ to: BURNER, value: '0' }], costly))
    // The fee is the transaction's: a batch of harmless calls carries it on every call.
    const inBatch = await outcome(
      BURNER,
      false,
      send(
        [
          { to: '0x00000000000000000000000000000000000000f3', value: '0' },
          { to: BURNER, value: '0' },
        ],
        costly,
      ),
    )
    expect({
      alone,
      inBatch,
      passkeyUsed: passkeyUses() > before,
      spent: start - (await balance(from)),
    }).toEqual({ alone: stopped, inBatch: stopped, passkeyUsed: false, spent: 0n })
    // Control: 0.01 ETH at the node's fee (a few gwei, its replacements' raises included) passes
    // without the passkey, and so does a fee the caller sets that stays under the amount.
    const PAYEE = '0x00000000000000000000000000000000000c0ffe'
    expect(await send([{ to: PAYEE, value: String(ETH / 100n) }], {})()).toBe('success')
    expect(
      await send([{ to: PAYEE, value: String(ETH / 100n) }], {
        gasLimit: '21000',
        maxFeePerGas: String(10n * GWEI),
        maxPriorityFeePerGas: String(GWEI),
      })(),
    ).toBe('success')
    expect({ paid: await balance(PAYEE), passkeyUsed: passkeyUses() > before }).toEqual({
      paid: ETH / 50n,
      passkeyUsed: false,
    })
  })
})
