// `sol_send_transaction` takes the published aliases `solana:mainnet` and `solana:devnet` and sends
// on the chain they stand for (`parseSolSend` → the canonical `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`);
// the policies, MFA conditions and session-profile scopes read `activity.params.caip2` as it sends
// (policies/policyParamsOf.ts). Before, they read it as sent, so a DENY on mainnet sends written
// with the canonical id (the one get_send_transaction_status and the limits name) let the same
// send through spelt `solana:mainnet`.
import { createServer, type Server } from 'node:http'
import type { Address } from '@solana/kit'
import { createNoopSigner } from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, SOLANA_ACCOUNT } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'
import { solanaTransaction } from '../support/solanaTransaction.ts'

const MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'
const DEAD = 'GDDMwNyyx8uB6zrqwBFHjLLG3TBYk2F8Az4yrQC5RzMp' as Address

// A node that says it is mainnet (what prepare asks before signing an unsponsored send).
let server: Server
let url: string
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      const { id, method } = JSON.parse(body)
      const result =
        method === 'getGenesisHash'
          ? '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d'
          : method === 'isBlockhashValid'
            ? { context: { slot: 1 }, value: true }
            : null
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe('a DENY on the Solana chain and the chain alias', () => {
  it('holds for solana:mainnet as for its canonical id', async () => {
    const h = await createHarness({ rpc: { [MAINNET]: url } })
    const t = await delegated([SOLANA_ACCOUNT], h)
    await t.policy({
      policyName: 'back end sends',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    await t.policy({
      policyName: 'never on mainnet',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'sol_send_transaction' && activity.params.caip2 == '${MAINNET}'`,
    })
    const user = t.sub.addresses![0] as Address
    const tx = solanaTransaction(user, [
      getTransferSolInstruction({ source: createNoopSigner(user), destination: DEAD, amount: 1_000_000n }),
    ])
    const send = (caip2: string) => {
      h.clock.advance(1)
      return h.submit('sol_send_transaction', { unsignedTransaction: tx, signWith: user, caip2 }, t.asBackend)
    }
    const control = await send(MAINNET)
    expect(control.body.details?.outcome, JSON.stringify(control.body).slice(0, 300)).toBe(
      'OUTCOME_DENY_EXPLICIT',
    )
    const attack = await send('solana:mainnet')
    const result = attack.body.activity?.result ?? {}
    const id = (Object.values(result)[0] as { sendTransactionStatusId?: string } | undefined)
      ?.sendTransactionStatusId
    const row = id ? await h.service.store.get('sendTransactions', id) : undefined
    expect(
      { status: attack.status, sentOn: (row as { caip2?: string } | undefined)?.caip2 },
      JSON.stringify(attack.body).slice(0, 400),
    ).toEqual({ status: 403, sentOn: undefined })
    await h.service.close()
  })
})
