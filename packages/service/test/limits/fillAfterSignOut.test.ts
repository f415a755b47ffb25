// A fill of a refused send's nonce is signed with the user's key and pays its fee from the account.
// docs/spending-limits.md: "The limits that covered the refused send count it". A session under a
// session profile (an agent's login) sends a transfer the node refuses (insufficient funds) and
// then the next one, so the first's nonce must be filled. The limits that counted the send are
// those of the credential that submitted it, as the send recorded it (`submittedWith`): the
// profile's limit and the session key's API-key limit count the fill even when the session signed
// out (delete_api_keys of its own key) before the worker saw the refusal. Looking the submitter up
// again then found no credential, and the fill counted under the account's limit only: the next
// session under the same profile started with that fee uncounted. A send recorded before the field
// (a rolling upgrade) is counted under its submitter as they are then.

import { describe, expect, it } from 'vitest'
import { fillIdOf } from '../../src/sending/evmSender.ts'
import { startSendWorker } from '../../src/sending/sendWorker.ts'
import { ETHEREUM_ACCOUNT, resultOf, testKey } from '../../src/testing/harness.ts'
import { byHandService, CAIP2, chainForFile, transferred, transfers } from '../sending/byHand.ts'
import { refusingNode } from '../sending/sendSupport.ts'

const chain = chainForFile()

describe('a fill made after the session signed out', { timeout: 60_000 }, () => {
  it.each([
    ['control: the session still signed in', { signsOut: false, recorded: true }],
    ['the session signed out before the worker saw the refusal', { signsOut: true, recorded: true }],
    ['a send recorded before it recorded its credential', { signsOut: false, recorded: false }],
  ])(
    'counts under the session limits that covered the refused send (%s)',
    async (_, { signsOut, recorded }) => {
      const h = await byHandService(
        chain,
        refusingNode((raw) => transferred(raw) === 7n, {
          message: 'insufficient funds for gas * price + value',
        }),
        { pollIntervalMs: 20 },
      )
      try {
        const sub = await h.createSubOrganization({
          wallet: { walletName: 'W', accounts: [ETHEREUM_ACCOUNT] },
        })
        const owner = sub.keys[0]!
        const organizationId = sub.organizationId
        const from = sub.addresses![0]!
        const userId = sub.userIds[0]!
        const submit = (path: Parameters<typeof h.submit>[0], parameters: unknown, as = owner) => {
          h.clock.set(Math.max(h.clock.now() + 1, Date.now()))
          return h.submit(path, parameters as never, { as, organizationId })
        }
        const profileId = resultOf(
          'create_session_profile',
          await submit('create_session_profile', { sessionProfileName: 'agent', scope: 'true' }),
        ).sessionProfileId as string
        const limit = async (name: string, scope: unknown) =>
          resultOf(
            'latchkey_create_spending_limit',
            await submit('latchkey_create_spending_limit', {
              spendingLimitName: name,
              scope,
              window: { type: 'SPENDING_LIMIT_WINDOW_ROLLING', period: 'PERIOD_DAY' },
              asset: { type: 'SPENDING_LIMIT_ASSET_NATIVE', caip2: CAIP2 },
              amount: String(10n ** 17n),
            }),
          ).spendingLimitId as string
        const profileLimit = await limit('profile', {
          type: 'SPENDING_LIMIT_SCOPE_SESSION_PROFILE',
          sessionProfileId: profileId,
        })
        // Control: a limit on the account, which covers the same signatures.
        const accountLimit = await limit('account', {
          type: 'SPENDING_LIMIT_SCOPE_WALLET_ACCOUNT',
          address: from,
        })
        await chain.fund(from, 10n ** 18n)

        // The agent's session under the profile.
        const key = testKey()
        resultOf(
          'stamp_login',
          await submit('stamp_login', {
            publicKey: key.publicKey,
            sessionProfileId: profileId,
            expirationSeconds: '3600',
          }),
        )
        const keys = await h.query('get_api_keys', { userId }, { as: owner, organizationId })
        const sessionKeyId = (
          keys.body.apiKeys as { apiKeyId: string; credential: { publicKey: string } }[]
        ).find((k) => k.credential.publicKey === key.publicKey)!.apiKeyId

        const send = transfers(h, from, { as: key, organizationId }, { followTime: true })
        // The session key's own limit, as an operator caps one agent's key.
        const keyLimit = await limit('session key', {
          type: 'SPENDING_LIMIT_SCOPE_API_KEY',
          apiKeyId: sessionKeyId,
        })

        const first = await send(7n) // the node refuses it
        const sent = (await h.service.store.get('sendTransactions', first))!
        if (!recorded) {
          // As an instance not yet upgraded wrote it.
          const { submittedWith: _, ...older } = sent
          await h.service.store.transaction((tx) => tx.put('sendTransactions', older))
        }
        await send(8n) // takes the next nonce: the first's cannot go back, it is filled
        // The session signs out (as every client's logout does) before the worker runs.
        if (signsOut)
          expect((await submit('delete_api_keys', { userId, apiKeyIds: [sessionKeyId] }, key)).status).toBe(
            200,
          )

        const worker = startSendWorker(h.service.runtime, { loop: false })
        h.clock.set(Date.now() + 1_000)
        await worker.pass()
        await worker.stop()
        const failed = (await h.service.store.get('sendTransactions', first))!
        expect(failed.status).toBe('FAILED')
        const fill = await h.service.store.get('sendTransactions', fillIdOf(first))
        // Control: the fill was made, signed by the account's key, paying its fee from the account.
        expect(fill?.fills).toBe(first)
        expect(BigInt(fill!.reservedFee!)).toBeGreaterThan(0n)

        const listed = (await h.query('latchkey_list_spending_limits', {}, { as: owner, organizationId }))
          .body.spendingLimits as { spendingLimitId: string; used: string }[]
        const used = (id: string) => BigInt(listed.find((l) => l.spendingLimitId === id)!.used)
        // Control: the account's limit counts the next send and the fill.
        const usage = await h.service.store.get('spendingLimitUsage', accountLimit)
        expect(usage?.spends).toContain(encodeURIComponent(fillIdOf(first)))
        // Safe: the profile's and the session key's limits, which covered the refused send, count the
        // fill too.
        expect(
          { profile: used(profileLimit).toString(), key: used(keyLimit).toString() },
          'the session profile and session key limits count the fill of its session’s refused send',
        ).toEqual({ profile: used(accountLimit).toString(), key: used(accountLimit).toString() })
        // What it was counted by is the credential the send recorded (or, recorded before that, its submitter then).
        expect(sent.submittedWith).toEqual({ kind: 'API_KEY', id: sessionKeyId, sessionProfileId: profileId })
      } finally {
        await h.service.close()
      }
    },
  )
})
