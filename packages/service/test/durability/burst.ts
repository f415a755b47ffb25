// A burst of concurrent writes against a running service, cut by kill -9, and the checks that
// every acknowledged activity survived and nothing is half-applied (shared by the SQLite and
// PostgreSQL crash tests).

import { expect } from 'vitest'
import { ETHEREUM_ACCOUNT, SOLANA_ACCOUNT } from '../../src/testing/testKeys.ts'
import { type Json, type Prepared, type Reply, type RootClient, resultOf } from '../support/RootClient.ts'
import type { ServiceProcess } from '../support/serviceProcess.ts'

/** An activity answered 200 before the crash. */
export interface Acknowledged {
  path: 'create_wallet' | 'sign_raw_payload'
  activityId: string
  /** `activity.result` as answered. */
  result: Json
  walletName?: string
}

/** A request sent before the crash that got no answer (or was never sent: connection refused). */
export interface Unanswered {
  path: 'create_wallet' | 'sign_raw_payload'
  prepared: Prepared
  walletName?: string
}

export interface BurstOutcome {
  acknowledged: Acknowledged[]
  unanswered: Unanswered[]
  /** Answers other than 200 (each one a failure of the service under concurrency). */
  refused: { path: string; reply: Reply }[]
  signWith: string
}

const WALLET_ACCOUNTS = [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT]

/**
 * `clients` concurrent loops of create_wallet / sign_raw_payload against `service`, SIGKILLed after
 * `burstMs`. Each loop stops at its first request without an answer.
 */
export async function burstThenCrash(
  service: ServiceProcess,
  client: RootClient,
  { clients = 8, burstMs = 2000, tag = 'crash' } = {},
): Promise<BurstOutcome> {
  const base = resultOf(
    'create_wallet',
    await client.submit(service, 'create_wallet', {
      walletName: `${tag}-base`,
      accounts: [ETHEREUM_ACCOUNT],
    }),
  )
  const signWith = base.addresses[0] as string
  const outcome: BurstOutcome = { acknowledged: [], unanswered: [], refused: [], signWith }
  const loop = async (worker: number) => {
    // Ends at the first request without an answer (every one after the kill).
    for (let n = 0; ; n++) {
      const walletName = `${tag}-${worker}-${n}`
      const request: Unanswered =
        n % 2 === 0
          ? {
              path: 'create_wallet',
              walletName,
              prepared: client.prepareActivity('create_wallet', { walletName, accounts: WALLET_ACCOUNTS }),
            }
          : {
              path: 'sign_raw_payload',
              prepared: client.prepareActivity('sign_raw_payload', {
                signWith,
                payload: `0x${(worker * 1_000_000 + n).toString(16).padStart(64, '0')}`,
                encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
                hashFunction: 'HASH_FUNCTION_KECCAK256',
              }),
            }
      let reply: Reply
      try {
        reply = await client.send(service, request.prepared)
      } catch {
        outcome.unanswered.push(request)
        return
      }
      if (reply.status !== 200) {
        outcome.refused.push({ path: request.path, reply })
        continue
      }
      outcome.acknowledged.push({
        path: request.path,
        activityId: reply.body.activity.id,
        result: reply.body.activity.result,
        ...(request.walletName ? { walletName: request.walletName } : {}),
      })
    }
  }
  const loops = Array.from({ length: clients }, (_, worker) => loop(worker))
  await new Promise((resolve) => setTimeout(resolve, burstMs))
  await service.crash()
  await Promise.all(loops)
  return outcome
}

interface WalletRow {
  walletId: string
  walletName: string
}

async function listWallets(client: RootClient, service: ServiceProcess): Promise<WalletRow[]> {
  const reply = await client.query(service, 'list_wallets')
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body.wallets as WalletRow[]
}

/**
 * After a restart on the same data (`restarted`): every acknowledged activity is there (COMPLETED, same result);
 * every wallet has all its accounts; each unanswered request, sent again byte for byte, answers
 * with the activity it created when that activity was stored (its wallet exists) and creates it
 * otherwise, so no request is applied twice and the wallet count adds up.
 */
export async function checkAfterRestart(
  client: RootClient,
  restarted: ServiceProcess,
  burst: BurstOutcome,
  crashed: ServiceProcess,
  tag = 'crash',
): Promise<void> {
  expect(
    burst.refused.map(({ path, reply }) => `${path} ${reply.status} ${JSON.stringify(reply.body)}`),
    `answers other than 200 before the crash; the crashed service's stderr:\n${crashed.stderr().slice(0, 4000)}`,
  ).toEqual([])
  const acknowledgedWallets = burst.acknowledged.filter((a) => a.path === 'create_wallet')
  expect(acknowledgedWallets.length, 'no create_wallet was acknowledged before the crash').toBeGreaterThan(0)
  expect(burst.acknowledged.some((a) => a.path === 'sign_raw_payload')).toBe(true)

  const missing: string[] = []
  for (const acknowledged of burst.acknowledged) {
    const reply = await client.query(restarted, 'get_activity', { activityId: acknowledged.activityId })
    if (reply.status !== 200) {
      missing.push(
        `${acknowledged.path} ${acknowledged.activityId}: ${reply.status} ${JSON.stringify(reply.body)}`,
      )
      continue
    }
    expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    expect(reply.body.activity.result).toEqual(acknowledged.result)
  }
  expect(missing, 'acknowledged activities lost by the crash').toEqual([])

  const before = await listWallets(client, restarted)
  const sentNames = new Set([
    `${tag}-base`,
    ...acknowledgedWallets.map((a) => a.walletName!),
    ...burst.unanswered.filter((u) => u.path === 'create_wallet').map((u) => u.walletName!),
  ])
  const names = before.map((w) => w.walletName)
  expect(new Set(names).size, 'a wallet name appears twice').toBe(names.length)
  expect(names.filter((name) => !sentNames.has(name))).toEqual([])
  const byName = new Map(before.map((w) => [w.walletName, w]))
  for (const acknowledged of acknowledgedWallets) {
    const wallet = byName.get(acknowledged.walletName!)
    expect(wallet?.walletId, `${acknowledged.walletName} is gone`).toBe(
      acknowledged.result.createWalletResult.walletId,
    )
  }
  // Nothing half-applied: every wallet has both accounts, and an acknowledged one its addresses.
  for (const wallet of before) {
    const reply = await client.query(restarted, 'list_wallet_accounts', { walletId: wallet.walletId })
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    const accounts = reply.body.accounts as { address: string; addressFormat: string }[]
    const expected = wallet.walletName === `${tag}-base` ? 1 : 2
    expect(accounts.length, `${wallet.walletName} has ${accounts.length} accounts`).toBe(expected)
    const acknowledged = acknowledgedWallets.find((a) => a.walletName === wallet.walletName)
    if (acknowledged)
      expect(accounts.map((a) => a.address).sort()).toEqual(
        [...acknowledged.result.createWalletResult.addresses].sort(),
      )
  }

  // The unanswered requests again, same bytes: a stored one answers with its activity.
  let created = 0
  for (const unanswered of burst.unanswered) {
    const reply = await client.send(restarted, unanswered.prepared)
    expect(reply.status, `${unanswered.path} replay: ${JSON.stringify(reply.body)}`).toBe(200)
    expect(reply.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED')
    if (unanswered.path !== 'create_wallet') continue
    const stored = byName.get(unanswered.walletName!)
    const walletId = reply.body.activity.result.createWalletResult.walletId
    if (stored) expect(walletId, `${unanswered.walletName} was applied twice`).toBe(stored.walletId)
    else created++
  }
  const after = await listWallets(client, restarted)
  expect(after.length).toBe(before.length + created)
  expect(after.length).toBe(
    1 + acknowledgedWallets.length + burst.unanswered.filter((u) => u.path === 'create_wallet').length,
  )
}
