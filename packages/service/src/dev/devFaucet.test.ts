import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../../scripts/evmNode.mjs'
import { createService, type Service } from '../assembly/createService.ts'
import { devFaucetPlugin, formatEth, parseEth, parseFundEntry } from './devFaucet.ts'

const ADDRESS = '0x1111111111111111111111111111111111111111'

describe('ETH amounts', () => {
  it('parses decimal ETH to wei and back', () => {
    expect(parseEth('1')).toBe(10n ** 18n)
    expect(parseEth('1.5')).toBe(15n * 10n ** 17n)
    expect(parseEth('0.000000000000000001')).toBe(1n)
    expect(formatEth(15n * 10n ** 17n)).toBe('1.5')
    expect(formatEth(10n ** 20n)).toBe('100')
    for (const wrong of ['', '1e18', '-1', '0x10', '1.0000000000000000001', ' 1'])
      expect(parseEth(wrong)).toBeUndefined()
  })

  it('reads --fund entries, 100 ETH by default, and refuses nothing and fortunes', () => {
    expect(parseFundEntry(ADDRESS)).toEqual({ address: ADDRESS, wei: 100n * 10n ** 18n })
    expect(parseFundEntry(`${ADDRESS}=2.5`)).toEqual({ address: ADDRESS, wei: 25n * 10n ** 17n })
    expect(parseFundEntry(`${ADDRESS}=0`)).toBeUndefined()
    expect(parseFundEntry(`${ADDRESS}=1000001`)).toBeUndefined()
    expect(parseFundEntry('0x1234')).toBeUndefined()
    expect(parseFundEntry(`${ADDRESS}=`)).toBeUndefined()
  })
})

describe('POST /dev/faucet', () => {
  let node: EvmNode
  let service: Service
  beforeAll(async () => {
    node = await startEvmNode()
    service = await createService({ plugins: [devFaucetPlugin(node)] })
  }, 30_000)
  afterAll(async () => {
    await service?.close()
    await node?.close()
  })

  const faucet = (body: unknown, headers: Record<string, string> = {}) =>
    service.app.request('/dev/faucet', {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: '127.0.0.1:8787', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
  const balance = async (address: string) =>
    BigInt((await node.rpc('eth_getBalance', [address, 'latest'])) as string)

  it('adds ETH to an account (100 by default) and answers the new balance', async () => {
    const address = '0x2222222222222222222222222222222222222222'
    const first = await faucet({ address, eth: '1.5' })
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ address, chainId: 31337, balance: '1.5' })
    const second = await faucet({ address })
    expect(await second.json()).toMatchObject({ balance: '101.5' })
    expect(await balance(address)).toBe(1015n * 10n ** 17n)
  })

  it('grants a loopback page CORS for its own origin and refuses other origins and hosts', async () => {
    const address = '0x3333333333333333333333333333333333333333'
    const local = await faucet({ address, eth: '1' }, { origin: 'http://localhost:5173' })
    expect(local.status).toBe(200)
    expect(local.headers.get('access-control-allow-origin')).toBe('http://localhost:5173')
    const foreign = await faucet({ address, eth: '1' }, { origin: 'https://evil.example' })
    expect(foreign.status).toBe(403)
    // DNS rebinding: a foreign name that resolves to 127.0.0.1.
    const rebound = await faucet({ address, eth: '1' }, { host: 'evil.example:8787' })
    expect(rebound.status).toBe(403)
    expect(await balance(address)).toBe(10n ** 18n)
  })

  it('names the field of a bad request', async () => {
    const bad = await faucet({ address: '0x12', eth: '1' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ details: { errorCode: 'FIELD_INVALID', field: 'address' } })
    const amount = await faucet({ address: ADDRESS, eth: 5 })
    expect(amount.status).toBe(400)
    expect((await amount.text()).includes('eth must be a decimal string')).toBe(true)
    expect((await faucet('not json')).status).toBe(400)
  })
})
