// Session profiles (issue 37) across two service instances on one PostgreSQL database: a session
// issued on A under a profile is confined on B by the profile as it is now. Narrowed on A, the
// session's next activity on B is refused; widened again, it passes; deleted on A, its session
// ends with it and B refuses it at once. No instance keeps a copy of a profile that could let a
// session outlive its scope.
import { type Hex, serializeTransaction } from 'viem'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT, type Harness, type Json, resultOf, testKey } from '../../src/testing/harness.ts'
import { twoInstances, usePostgres } from '../support/twoInstances.ts'

const DEAD = '0x000000000000000000000000000000000000dead'

const postgres = usePostgres()

let nonce = 0
const unsigned = () =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 1,
    nonce: nonce++,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 21_000n,
    to: DEAD as Hex,
    value: 1n,
  })

const codeOf = (reply: { status: number; body: Json }) => [reply.status, reply.body?.details?.errorCode]

describe('session profiles across two instances on PostgreSQL', () => {
  it('a profile narrowed, widened or deleted on A confines a session used on B at once', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = (await twoInstances(postgres.cluster, 'profiles')) as [Harness, Harness]
    const sub = await a.createSubOrganization({
      wallet: { walletName: 'Agent', accounts: [ETHEREUM_ACCOUNT] },
    })
    const { organizationId } = sub
    const owner = sub.keys[0]!
    const asOwner = { as: owner, organizationId }
    const on = (h: Harness) => {
      a.clock.advance(1)
      return h
    }
    const { walletId } = sub
    const address = sub.addresses![0]!
    const sessionProfileId = resultOf(
      'create_session_profile',
      await on(a).submit(
        'create_session_profile',
        { sessionProfileName: 'agent', scope: `activity.action == 'SIGN' && wallet.id == '${walletId}'` },
        asOwner,
      ),
    ).sessionProfileId as string
    const key = testKey()
    resultOf(
      'stamp_login',
      await on(a).submit('stamp_login', { publicKey: key.publicKey, sessionProfileId }, asOwner),
    )
    const sign = (h: Harness) =>
      on(h).submit(
        'sign_transaction',
        { signWith: address, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned() },
        { as: key, organizationId },
      )
    const update = (scope: string) =>
      on(a).submit('latchkey_update_session_profile', { sessionProfileId, scope }, asOwner)

    // Issued on A, used on B: its scope holds there (a sign for its wallet passes, anything else not).
    expect((await sign(b)).status).toBe(200)
    expect(
      codeOf(
        await on(b).submit(
          'create_wallet',
          { walletName: 'More', accounts: [] },
          { as: key, organizationId },
        ),
      ),
    ).toEqual([403, 'SESSION_SCOPE_DENIED'])

    // Narrowed on A: B refuses the session's very next signature; widened again, B signs.
    resultOf(
      'latchkey_update_session_profile',
      await update("activity.action == 'SIGN' && wallet.id == 'none'"),
    )
    expect(codeOf(await sign(b))).toEqual([403, 'SESSION_SCOPE_DENIED'])
    resultOf('latchkey_update_session_profile', await update(`wallet.id == '${walletId}'`))
    expect((await sign(b)).status).toBe(200)

    // Deleted on A: its session ended with it (its key deleted), B refuses it at once, and so does A.
    resultOf(
      'latchkey_delete_session_profile',
      await on(a).submit('latchkey_delete_session_profile', { sessionProfileId }, asOwner),
    )
    expect(codeOf(await sign(b))).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    expect(codeOf(await sign(a))).toEqual([401, 'PUBLIC_KEY_NOT_FOUND'])
    // The owner's own credentials are not confined.
    expect((await on(b).submit('create_wallet', { walletName: 'Mine', accounts: [] }, asOwner)).status).toBe(
      200,
    )
    for (const h of [a, b]) await h.service.close()
  })
})
