// `latchkey-service dev --evm --fund`: the CLI starts a local anvil for the app, funds accounts on
// it, sends through it (sponsored too: the delegate deployed and the sponsor funded by default),
// serves the faucet, and the node goes away with the service.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { jsonRpc } from '../../src/dev/startEvmNode.ts'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { post, RootClient, resultOf } from '../support/RootClient.ts'
import { killAll, root, startService } from '../support/serviceProcess.ts'

const FUNDED = '0x4444444444444444444444444444444444444444'
const DEAD = '0x000000000000000000000000000000000000dEaD'
// The repository's anvil (scripts/anvil), so the test installs nothing from the registry.
const env = { LATCHKEY_ANVIL_DIR: join(root, 'scripts/anvil') }

afterEach(() => killAll())

describe('latchkey-service dev --evm', () => {
  it('starts a funded local node, sends through it, serves the faucet and stops with the service', async () => {
    const service = await startService({
      args: ['--evm', '--evm-port', '0', '--fund', `${FUNDED}=2.5`],
      env,
    })
    const info = service.info as typeof service.info & {
      evmRpcUrl: string
      evmChainId: number
      sponsorAddress: string
    }
    expect(info.evmRpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(info.evmChainId).toBe(31337)
    expect(await jsonRpc(info.evmRpcUrl, 'eth_chainId')).toBe('0x7a69')
    expect(BigInt((await jsonRpc(info.evmRpcUrl, 'eth_getBalance', [FUNDED, 'latest'])) as string)).toBe(
      25n * 10n ** 17n,
    )

    // An account of the dev organization, funded through the faucet, sends through the service.
    const root = new RootClient(service.info)
    const { addresses } = resultOf(
      'create_wallet',
      await root.submit(service, 'create_wallet', { walletName: 'Dev chain', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const from = addresses[0] as string
    const funded = await post(`${service.baseUrl}/dev/faucet`, JSON.stringify({ address: from, eth: '1' }), {
      Origin: 'http://localhost:5173',
    })
    expect(funded).toMatchObject({ status: 200, body: { address: from, chainId: 31337, balance: '1' } })
    const sent = resultOf(
      'eth_send_transaction',
      await root.submit(service, 'eth_send_transaction', {
        from,
        caip2: 'eip155:31337',
        calls: [{ to: DEAD, value: '1000' }],
      }),
    )
    let status: { txStatus: string } | undefined
    for (const until = Date.now() + 20_000; Date.now() < until; ) {
      const reply = await root.query(service, 'get_send_transaction_status', {
        sendTransactionStatusId: sent.sendTransactionStatusId,
      })
      status = reply.body
      if (status?.txStatus === 'INCLUDED') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toMatchObject({ txStatus: 'INCLUDED' })
    expect(BigInt((await jsonRpc(info.evmRpcUrl, 'eth_getBalance', [DEAD, 'latest'])) as string)).toBe(1000n)

    // Sponsorship is on without a flag: an account holding no ETH sends, the dev sponsor paying.
    expect(info.sponsorAddress).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const sponsorBefore = BigInt(
      (await jsonRpc(info.evmRpcUrl, 'eth_getBalance', [info.sponsorAddress, 'latest'])) as string,
    )
    expect(sponsorBefore).toBe(100n * 10n ** 18n)
    const { addresses: empty } = resultOf(
      'create_wallet',
      await root.submit(service, 'create_wallet', { walletName: 'No ETH', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const sponsored = resultOf(
      'eth_send_transaction',
      await root.submit(service, 'eth_send_transaction', {
        from: empty[0],
        caip2: 'eip155:31337',
        sponsor: true,
        calls: [{ to: DEAD, value: '0', data: '0x' }],
      }),
    )
    for (const until = Date.now() + 20_000; Date.now() < until; ) {
      const reply = await root.query(service, 'get_send_transaction_status', {
        sendTransactionStatusId: sponsored.sendTransactionStatusId,
      })
      status = reply.body
      if (status?.txStatus === 'INCLUDED' || status?.txStatus === 'FAILED') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toMatchObject({ txStatus: 'INCLUDED' })
    expect(
      BigInt((await jsonRpc(info.evmRpcUrl, 'eth_getBalance', [info.sponsorAddress, 'latest'])) as string),
    ).toBeLessThan(sponsorBefore)

    expect(await service.stop()).toBe(0)
    await expect(jsonRpc(info.evmRpcUrl, 'eth_chainId')).rejects.toThrow()
  }, 90_000)

  it('without --evm there is no faucet', async () => {
    const service = await startService({ env })
    const reply = await post(`${service.baseUrl}/dev/faucet`, JSON.stringify({ address: FUNDED }))
    expect(reply.status).toBe(404)
    await service.stop()
  }, 60_000)
})
