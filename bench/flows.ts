/**
 * `npm run bench:flows`: what each user-facing flow costs against the in-process local service
 * (`createService().fetch` as the client's `fetch`, wrapped to count requests): HTTP round
 * trips, the requests made, and wall time (median of RUNS fresh page loads). It also checks that
 * no request is redundant. Prints figures; it is a benchmark, not part of `npm test`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Store } from '@latchkey/service'
import { openDataDir, openPostgres } from '@latchkey/service/node'
import { createTestService, installSoftAuthenticator, latestCode } from '@latchkey/service/testing'
import { render as renderReact, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { createElement as h } from 'react'
import { expect, test } from 'vitest'
import { type PostgresCluster, startPostgres } from '../scripts/postgres.mjs'
import {
  completeOtpSignIn,
  createLatchkey,
  createWallet,
  type Latchkey,
  logout,
  signInWithPasskey,
  signRawPayloads,
  signUpWithPasskey,
  startOtpSignIn,
} from '../src/core/index.ts'
import { AuthModal, LatchkeyProvider, useUser, useWallets } from '../src/index.ts'
import { type CountedCall, countingFetch } from './countingFetch.ts'
import { median, printTable } from './printTable.ts'

const RUNS = 5
/** The OTP code the local service delivered to `contact` (read from the dev outbox, not counted). */
const deliveredCode = latestCode

interface StepResult {
  paths: string[]
  ms: number
}

test('flow cost against the in-process service', async () => {
  const { service, clientConfig } = await createTestService()
  const authenticator = installSoftAuthenticator()
  /** step name → one result per run */
  const results = new Map<string, StepResult[]>()
  const configFetches: number[] = []
  const redundant: string[] = []
  const failures = new Map<string, string>()

  try {
    for (let run = 0; run < RUNS; run++) {
      const clients: { client: Latchkey; calls: CountedCall[] }[] = []
      // A fresh client is a fresh page load (or another device): nothing cached.
      const newClient = () => {
        const counted = countingFetch(service.fetch)
        const client = createLatchkey({
          ...clientConfig,
          fetch: counted.fetch,
          storage: null,
          passkey: { rpId: 'localhost' },
        })
        clients.push({ client, calls: counted.calls })
        return { client, calls: counted.calls }
      }
      const step = async (
        name: string,
        calls: CountedCall[],
        action: () => Promise<unknown>,
        { repeats = false } = {},
      ) => {
        const before = calls.length
        const started = performance.now()
        try {
          await action()
        } catch (error) {
          // Keep measuring the other flows; the failure is printed and fails the run at the end.
          failures.set(name, error instanceof Error ? `${error.name}: ${error.message}` : String(error))
          return
        }
        const ms = performance.now() - started
        const paths = calls.slice(before).map((c) => c.path)
        const list = results.get(name) ?? []
        list.push({ paths, ms })
        results.set(name, list)
        const seen = new Set<string>()
        for (const path of paths) {
          if (seen.has(path) && !repeats) redundant.push(`${name}: ${path} requested twice`)
          seen.add(path)
        }
      }
      const email = `bench-${run}-${crypto.randomUUID().slice(0, 8)}@example.com`
      const otpSignIn = async (client: Latchkey) => {
        const pending = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
        await completeOtpSignIn(client, { ...pending, otpCode: await deliveredCode(service, email) })
      }

      // Page 1: a new user signs up by e-mail, creates a wallet and signs.
      const first = newClient()
      await step('e-mail OTP sign-up (new user)', first.calls, () => otpSignIn(first.client))
      let address = ''
      await step('create wallet (Ethereum + Solana accounts)', first.calls, async () => {
        address = (await createWallet(first.client, { walletName: 'Bench' })).addresses[0] ?? ''
      })
      const sign = (payloads: string[]) =>
        signRawPayloads(first.client, {
          signWith: address,
          payloads,
          encoding: 'PAYLOAD_ENCODING_TEXT_UTF8',
          hashFunction: 'HASH_FUNCTION_KECCAK256',
        })
      await step('sign 1 payload', first.calls, async () =>
        expect((await sign(['hello'])).signatures).toHaveLength(1),
      )
      await step('sign 100 payloads (one activity)', first.calls, async () => {
        const payloads = Array.from({ length: 100 }, (_, i) => `payload ${i}`)
        expect((await sign(payloads)).signatures).toHaveLength(100)
      })
      await step(
        'sign 100 payloads (100 concurrent activities)',
        first.calls,
        () => Promise.all(Array.from({ length: 100 }, (_, i) => sign([`payload ${i}`]))),
        { repeats: true },
      )

      // Page 2 (another device): the same person signs in again by e-mail.
      const second = newClient()
      await step('e-mail OTP sign-in (returning user)', second.calls, () => otpSignIn(second.client))

      // Page 3: a passkey user signs up, logs out, signs in with the passkey.
      const third = newClient()
      await step('passkey sign-up (new user)', third.calls, () =>
        signUpWithPasskey(third.client, { userName: `Passkey ${run}` }),
      )
      await step('log out (revokes the session key)', third.calls, () => logout(third.client))
      await step('passkey sign-in', third.calls, () => signInWithPasskey(third.client))

      for (const { client, calls } of clients) {
        configFetches.push(calls.filter((c) => c.path === 'wallet_kit_config').length)
        client.destroy()
      }
    }
  } finally {
    authenticator.uninstall()
    await service.close()
  }

  const rows = [...results].map(([name, list]): string[] => {
    const first = list[0] as StepResult
    const distinct = [...new Set(first.paths)].map((p) => {
      const n = first.paths.filter((q) => q === p).length
      return n > 1 ? `${p} ×${n}` : p
    })
    return [
      name,
      String(first.paths.length),
      `${median(list.map((r) => r.ms)).toFixed(1)} ms`,
      distinct.join(', '),
    ]
  })
  for (const [name, message] of failures) if (!results.has(name)) rows.push([name, 'n/a', 'FAILED', message])
  console.log(
    `\nbench:flows: in-process local service, median of ${RUNS} fresh clients` +
      ` (node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores)\n`,
  )
  printTable(['flow', 'round trips', 'wall time', 'requests'], rows)
  for (const [name, message] of failures) console.log(`FAILED ${name}: ${message}`)
  console.log(
    `\nwallet_kit_config fetched ${configFetches.join(', ')} time(s) per client; redundant requests: ${
      redundant.length ? redundant.join('; ') : 'none'
    }`,
  )
  expect([...failures]).toEqual([])
  expect(configFetches.every((n) => n === 1)).toBe(true)
  expect(redundant).toEqual([])
})

/** Users signing in at once in the server-side sign-in figures (an app's usual concurrency). */
const SIGN_IN_USERS = 20
const percentileOf = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}
const p50p99 = (values: number[]) =>
  values.length === 0
    ? 'n/a'
    : `${percentileOf(values, 50).toFixed(1)} / ${percentileOf(values, 99).toFixed(1)} ms`

test(`server-side e-mail OTP sign-in, ${SIGN_IN_USERS} users at once, on SQLite and PostgreSQL`, async () => {
  // The service's own time: each request timed around the in-process service's fetch (no network,
  // no client work between requests); "user waits" adds the client's work between them.
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-flows-'))
  let cluster: PostgresCluster | undefined
  const rows: string[][] = []
  const backends: [string, () => Promise<Store>][] = [
    ['SQLite (data dir)', () => openDataDir(join(dir, 'sqlite'))],
    [
      'PostgreSQL',
      async () => {
        cluster = await startPostgres()
        return openPostgres(cluster.url)
      },
    ],
  ]
  try {
    for (const [backend, open] of backends) {
      const { service, clientConfig } = await createTestService({ store: await open() })
      try {
        const emails = Array.from(
          { length: SIGN_IN_USERS },
          (_, n) => `flows-${n}-${crypto.randomUUID().slice(0, 8)}@example.com`,
        )
        // First the sign-up (a new user: otp_init, otp_verify, the sign-up, otp_login), then the
        // same people signing in again from fresh clients.
        for (const pass of ['sign-up (new user)', 'sign-in (returning user)']) {
          const failed: string[] = []
          const attempts = await Promise.all(
            emails.map(async (email) => {
              const counted = countingFetch(service.fetch)
              const client = createLatchkey({ ...clientConfig, fetch: counted.fetch, storage: null })
              const started = performance.now()
              try {
                const pending = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: email })
                await completeOtpSignIn(client, { ...pending, otpCode: await deliveredCode(service, email) })
                return { wall: performance.now() - started, calls: counted.calls }
              } catch (error) {
                // Counted and named below (a benchmark prints what failed; it does not stop).
                failed.push(`${(error as Error).name}: ${(error as Error).message}`)
                return undefined
              } finally {
                client.destroy()
              }
            }),
          )
          const perUser = attempts.filter((user) => user !== undefined)
          if (failed.length > 0)
            rows.push([
              backend,
              pass,
              'FAILED sign-ins',
              `${failed.length} (first: ${failed[0]!.slice(0, 120)})`,
            ])
          const paths = [...new Set(perUser.flatMap((user) => user.calls.map((call) => call.path)))]
          for (const path of paths)
            rows.push([
              backend,
              pass,
              path,
              p50p99(
                perUser.flatMap((user) =>
                  user.calls.filter((call) => call.path === path).map((call) => call.end - call.start),
                ),
              ),
            ])
          rows.push([
            backend,
            pass,
            'the service, whole sign-in',
            p50p99(perUser.map((user) => user.calls.reduce((sum, call) => sum + call.end - call.start, 0))),
          ])
          rows.push([
            backend,
            pass,
            'the user waits (with client work)',
            p50p99(perUser.map((user) => user.wall)),
          ])
        }
      } finally {
        await service.close()
      }
    }
  } finally {
    await cluster?.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(
    `\nbench:flows: the service's time for an e-mail OTP sign-in, ${SIGN_IN_USERS} users at once` +
      ` (p50 / p99; node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores)\n`,
  )
  printTable(['backend', 'flow', 'request', 'p50 / p99'], rows)
  expect(rows.length).toBeGreaterThan(0)
}, 300_000)

/** Reads the signed-in user, as an app's header would. */
function UserEmail() {
  return h('span', null, `user: ${useUser().data?.user.userEmail ?? '…'}`)
}
/** Reads the wallets, as an app's wallet panel would. */
function WalletCount() {
  const wallets = useWallets().data?.wallets
  return h('span', null, `wallets: ${wallets ? wallets.length : '…'}`)
}

test('sign-in app: e-mail OTP through <AuthModal/>, then the signed-in page', async () => {
  const { service, clientConfig } = await createTestService()
  const counted = countingFetch(service.fetch)
  const config = { ...clientConfig, fetch: counted.fetch, storage: null }
  const email = 'modal@example.com'
  const user = userEvent.setup()
  renderReact(h(LatchkeyProvider, { config }, h(AuthModal), h(UserEmail), h(WalletCount)))
  const t0 = performance.now()
  await user.click(screen.getByRole('button', { name: 'Sign in' }))
  await user.type(await screen.findByRole('textbox', { name: 'Email address' }), email)
  await user.click(screen.getByRole('button', { name: 'Continue' }))
  await screen.findByRole('heading', { name: 'Enter the code' })
  await user.click(screen.getByRole('textbox', { name: 'Digit 1 of 6' }))
  await user.paste(await deliveredCode(service, email))
  await screen.findByText(`user: ${email}`, undefined, { timeout: 10_000 })
  await screen.findByText('wallets: 0')
  const total = performance.now() - t0
  // Let anything still scheduled run, so a late duplicate would be counted.
  await new Promise((resolve) => setTimeout(resolve, 200))
  await waitFor(() => expect(counted.calls.length).toBeGreaterThan(0))
  await service.close()

  const calls = counted.calls.map((c) => ({ ...c, start: c.start - t0, end: c.end - t0 }))
  console.log(
    '\nbench:flows: the sign-in app (<AuthModal/> + a user and a wallets panel), e-mail OTP sign-up\n',
  )
  printTable(
    ['request', 'start', 'end'],
    calls.map((c) => [c.path, `${c.start.toFixed(1)} ms`, `${c.end.toFixed(1)} ms`]),
  )
  const login = calls.find((c) => c.path === 'otp_login')
  const after = calls.filter((c) => login && c.start >= login.end)
  const userCall = after.find((c) => c.path === 'query/get_user' || c.path === 'query/whoami')
  const walletsCall = after.find((c) => c.path === 'query/list_wallets')
  const parallel = Boolean(
    userCall && walletsCall && userCall.start < walletsCall.end && walletsCall.start < userCall.end,
  )
  const count = (path: string) => calls.filter((c) => c.path === path).length
  const duplicates = [...new Set(calls.map((c) => c.path))].filter((path) => count(path) > 1)
  console.log(
    `\n${calls.length} round trips, ${total.toFixed(0)} ms from the first click to the signed-in page` +
      ` (includes simulated typing); wallet_kit_config fetched ${count('wallet_kit_config')} time(s);` +
      ` after sign-in: ${after.map((c) => c.path).join(' + ')} ${parallel ? 'in parallel' : 'NOT in parallel'};` +
      ` duplicated requests: ${duplicates.length ? duplicates.join(', ') : 'none'}`,
  )
  expect(count('wallet_kit_config')).toBe(1)
  expect(duplicates).toEqual([])
  expect(parallel).toBe(true)
})
