// `latchkey_get_send_capabilities`: what `sponsor: true` and a batch of several calls would find on
// each chain with a node, for the caller's organization, by the same conditions a send is refused on.
import { describe, expect, it } from 'vitest'
import { createHarness } from '../../src/testing/harness.ts'

const DELEGATE = '0x1111111111111111111111111111111111111111'
const SOLANA = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1'
// No node answers: the query reads the configuration only.
const rpc = {
  'eip155:1': 'http://127.0.0.1:9',
  'eip155:31337': 'http://127.0.0.1:9',
  [SOLANA]: 'http://127.0.0.1:9',
}

describe('latchkey_get_send_capabilities', () => {
  it('reports sponsorship and batches per chain: a delegate for EVM, a sponsor for the organization', async () => {
    const h = await createHarness({ rpc, sponsorship: { delegates: { 'eip155:31337': DELEGATE } } })
    const reply = await h.query('latchkey_get_send_capabilities', {})
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      chains: [
        { caip2: 'eip155:1', gasSponsorship: false, atomicBatch: false },
        { caip2: 'eip155:31337', gasSponsorship: true, atomicBatch: true },
        { caip2: SOLANA, gasSponsorship: true, atomicBatch: true },
      ],
    })
    await h.service.close()
  })

  it("says no sponsorship where no sponsor serves the caller's organization, batches still", async () => {
    const h = await createHarness({
      rpc,
      sponsorship: { delegates: { 'eip155:31337': DELEGATE }, sponsors: { 'another-organization': {} } },
    })
    const reply = await h.query('latchkey_get_send_capabilities', {})
    expect(reply.body).toMatchObject({
      chains: [
        { caip2: 'eip155:1', gasSponsorship: false },
        { caip2: 'eip155:31337', gasSponsorship: false, atomicBatch: true },
        { caip2: SOLANA, gasSponsorship: false },
      ],
    })
    await h.service.close()
  })

  it('without sponsorship or nodes: nothing sponsored, no chains', async () => {
    const h = await createHarness({ rpc: { 'eip155:1': 'http://127.0.0.1:9' } })
    expect((await h.query('latchkey_get_send_capabilities', {})).body).toEqual({
      chains: [{ caip2: 'eip155:1', gasSponsorship: false, atomicBatch: false }],
    })
    await h.service.close()
    const none = await createHarness()
    expect((await none.query('latchkey_get_send_capabilities', {})).body).toEqual({ chains: [] })
    await none.service.close()
  })
})
