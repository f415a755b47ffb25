// `latchkey-service dev --solana`: the CLI starts a local Solana node (LiteSVM) for the app, funds
// a Solana sponsor and sponsors sends through it, so an account holding no SOL sends with the
// sponsor as fee payer; `--env` writes the node's URL, CAIP-2 id and sponsor; `--no-sponsor` opts out.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  AccountRole,
  type Address,
  address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit'
import { afterEach, describe, expect, it } from 'vitest'
import { jsonRpc } from '../../src/dev/startEvmNode.ts'
import { SOLANA_ACCOUNT } from '../../src/testing/testKeys.ts'
import { RootClient, resultOf } from '../support/RootClient.ts'
import { killAll, root, startService } from '../support/serviceProcess.ts'

// The repository's LiteSVM (a devDependency), so the test installs nothing from the registry.
const env = { LATCHKEY_LITESVM_DIR: root }
const MEMO = address('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr')
const dirs: string[] = []

afterEach(() => {
  killAll()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

interface SolanaInfo {
  solanaRpcUrl: string
  solanaCaip2: string
  solanaSponsorAddress?: string
}

const balanceOf = async (url: string, account: string) =>
  BigInt(((await jsonRpc(url, 'getBalance', [account])) as { value: number }).value)

/** A memo signed by `signer`, paid by `signer` (the service makes the sponsor the fee payer), as hex. */
async function memoFrom(url: string, signer: string): Promise<string> {
  const { value } = (await jsonRpc(url, 'getLatestBlockhash')) as {
    value: { blockhash: string; lastValidBlockHeight: number }
  }
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(signer as Address, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: value.blockhash as never, lastValidBlockHeight: BigInt(value.lastValidBlockHeight) },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: MEMO,
          accounts: [{ address: signer as Address, role: AccountRole.READONLY_SIGNER }],
          data: new TextEncoder().encode('sponsored by dev --solana'),
        },
        m,
      ),
  )
  return Buffer.from(getTransactionEncoder().encode(compileTransaction(message))).toString('hex')
}

describe('latchkey-service dev --solana', () => {
  it('starts a node with a funded sponsor: an account holding no SOL sends, the sponsor paying', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'latchkey-dev-solana-'))
    dirs.push(dir)
    const envFile = join(dir, '.env.local')
    const service = await startService({
      args: ['--solana', '--solana-port', '0', '--data-dir', join(dir, 'data'), '--env', envFile],
      env,
    })
    const info = service.info as typeof service.info & SolanaInfo
    expect(info.solanaRpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(info.solanaRpcUrl.endsWith(':8899')).toBe(false)
    const genesis = (await jsonRpc(info.solanaRpcUrl, 'getGenesisHash')) as string
    expect(info.solanaCaip2).toBe(`solana:${genesis.slice(0, 32)}`)
    const sponsor = info.solanaSponsorAddress!
    expect(sponsor).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    const sponsorBefore = await balanceOf(info.solanaRpcUrl, sponsor)
    expect(sponsorBefore).toBe(100n * 10n ** 9n)
    const written = readFileSync(envFile, 'utf8').split('\n')
    for (const line of [
      `VITE_LATCHKEY_SOLANA_RPC_URL=${info.solanaRpcUrl}`,
      `VITE_LATCHKEY_SOLANA_CAIP2=${info.solanaCaip2}`,
      `VITE_LATCHKEY_SOLANA_SPONSOR_ADDRESS=${sponsor}`,
    ])
      expect(written).toContain(line)

    const rootClient = new RootClient(service.info)
    const { addresses } = resultOf(
      'create_wallet',
      await rootClient.submit(service, 'create_wallet', { walletName: 'No SOL', accounts: [SOLANA_ACCOUNT] }),
    )
    const user = addresses[0] as string
    expect(await balanceOf(info.solanaRpcUrl, user)).toBe(0n)
    const sent = resultOf(
      'sol_send_transaction',
      await rootClient.submit(service, 'sol_send_transaction', {
        unsignedTransaction: await memoFrom(info.solanaRpcUrl, user),
        signWiths: [user],
        caip2: info.solanaCaip2,
        sponsor: true,
      }),
    )
    let status: { txStatus: string } | undefined
    for (const until = Date.now() + 20_000; Date.now() < until; ) {
      const reply = await rootClient.query(service, 'get_send_transaction_status', {
        sendTransactionStatusId: sent.sendTransactionStatusId,
      })
      status = reply.body
      if (status?.txStatus === 'INCLUDED' || status?.txStatus === 'FAILED') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(status).toMatchObject({ txStatus: 'INCLUDED' })
    // The user still holds nothing; the sponsor paid the fee of both signatures.
    expect(await balanceOf(info.solanaRpcUrl, user)).toBe(0n)
    expect(await balanceOf(info.solanaRpcUrl, sponsor)).toBe(sponsorBefore - 2n * 5000n)

    expect(await service.stop()).toBe(0)
    await expect(jsonRpc(info.solanaRpcUrl, 'getSlot')).rejects.toThrow()
  }, 90_000)

  it('--no-sponsor: the node runs, a sponsored send is refused and nothing is funded', async () => {
    const service = await startService({ args: ['--solana', '--solana-port', '0', '--no-sponsor'], env })
    const info = service.info as typeof service.info & SolanaInfo
    expect(info.solanaSponsorAddress).toBeUndefined()
    const rootClient = new RootClient(service.info)
    const { addresses } = resultOf(
      'create_wallet',
      await rootClient.submit(service, 'create_wallet', { walletName: 'No SOL', accounts: [SOLANA_ACCOUNT] }),
    )
    const user = addresses[0] as string
    const reply = await rootClient.submit(service, 'sol_send_transaction', {
      unsignedTransaction: await memoFrom(info.solanaRpcUrl, user),
      signWiths: [user],
      caip2: info.solanaCaip2,
      sponsor: true,
    })
    expect(reply.status).toBeGreaterThanOrEqual(400)
    expect(reply.status).toBeLessThan(500)
    expect(JSON.stringify(reply.body)).toMatch(/sponsor/i)
    await service.stop()
  }, 60_000)
})
