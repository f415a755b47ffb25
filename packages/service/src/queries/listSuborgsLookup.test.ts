import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { toChecksumAddress } from '../kernel/crypto/addresses.ts'
import {
  createHarness,
  ETHEREUM_ACCOUNT,
  fillRows,
  type Harness,
  resultOf,
  testKey,
} from '../testing/harness.ts'

/**
 * `list_suborgs` with a filter finds the value through its index and maps the matches to the
 * parent's sub-organizations: the auth proxy's anonymous `/v1/account` (and every OTP/OAuth login
 * and e-mail sign-up, which look the account up the same way) reads the same few rows however many
 * accounts there are, where it read every sub-organization and its users, keys and passkeys.
 */
async function lookupReads(h: Harness, publicKey: string) {
  const store = h.service.store as unknown as { findBy: (...args: unknown[]) => Promise<unknown> }
  const original = store.findBy
  let reads = 0
  store.findBy = function (this: unknown, ...args: unknown[]) {
    reads++
    return original.apply(this, args)
  }
  try {
    const res = await h.service.app.request('/v1/account', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
        Origin: 'http://app.test',
      },
      body: JSON.stringify({ filterType: 'PUBLIC_KEY', filterValue: publicKey }),
    })
    return { status: res.status, body: await res.json(), reads }
  } finally {
    store.findBy = original
  }
}

const ids = (reply: { status: number; body: { organizationIds?: string[] } }) => {
  expect(reply.status).toBe(200)
  return reply.body.organizationIds
}

describe('list_suborgs with a filter', () => {
  it('an account lookup costs the same reads with 5 accounts as with 100', async () => {
    const h = await createHarness()
    const known = await h.createSubOrganization()
    for (let i = 0; i < 4; i++) await h.createSubOrganization()
    const unknown = testKey().publicKey
    const few = await lookupReads(h, unknown)
    expect(few).toMatchObject({ status: 200, body: { organizationId: null } })
    for (let i = 0; i < 95; i++) await h.createSubOrganization()
    const many = await lookupReads(h, unknown)
    expect(many).toEqual({ ...few, reads: few.reads })
    // Control: a key that is there is found, as cheaply.
    const found = await lookupReads(h, known.keys[0]!.publicKey)
    expect(found).toEqual({ status: 200, body: { organizationId: known.organizationId }, reads: few.reads })
  }, 60_000)

  it('an e-mail lookup reads none of the unverified copies of the address end users set in their own accounts', async () => {
    const h = await createHarness()
    const mail = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Victim',
        rootUsers: [
          {
            userName: 'Victim',
            userEmail: 'victim@example.com',
            apiKeys: [],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      }),
    ).subOrganizationId
    const lookup = async () => {
      const store = h.service.store as unknown as { findBy: (...args: unknown[]) => Promise<unknown[]> }
      const original = store.findBy
      let rows = 0
      store.findBy = async function (this: unknown, ...args: unknown[]) {
        const found = await original.apply(this, args)
        rows += found.length
        return found
      }
      try {
        const reply = await h.query('list_suborgs', {
          filterType: 'EMAIL',
          filterValue: 'Victim@example.com',
        })
        return { organizationIds: reply.body.organizationIds, rows }
      } finally {
        store.findBy = original
      }
    }
    const before = await lookup()
    expect(before.organizationIds).toEqual([mail])
    // An attacker's account holds 300 users with the victim's address, unverified (as its own
    // create_users sets them).
    const attacker = await h.createSubOrganization()
    await fillRows(h, 'users', 300, (i) => ({
      organizationId: attacker.organizationId,
      userName: `copy ${i}`,
      userEmail: 'victim@example.com',
      userEmailUnverified: true as const,
    }))
    expect(await lookup()).toEqual(before)
  })

  it('answers as before for every filter type: the parent’s sub-organizations that match, in id order, a page at a time', async () => {
    const h = await createHarness()
    const a = await h.createSubOrganization({
      name: 'Shared',
      wallet: { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] },
    })
    const b = await h.createSubOrganization({ name: 'Shared' })
    const c = await h.createSubOrganization({ name: 'Alone' })
    const mail = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Mail',
        rootUsers: [
          {
            userName: 'Mailed',
            userEmail: 'mail@example.com',
            userPhoneNumber: '+15551234567',
            apiKeys: [],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      }),
    ).subOrganizationId
    // The parent's own user of that name is not a sub-organization's.
    resultOf(
      'create_users',
      await h.submit('create_users', {
        users: [{ userName: 'User 1', apiKeys: [], authenticators: [], oauthProviders: [] }],
      }),
    )
    const list = (filterType: string, filterValue: string, paginationOptions?: Record<string, string>) =>
      h.query('list_suborgs', {
        filterType,
        filterValue,
        ...(paginationOptions ? { paginationOptions } : {}),
      })
    const shared = [a.organizationId, b.organizationId].sort()
    expect(ids(await list('NAME', 'Shared'))).toEqual(shared)
    expect(ids(await list('NAME', 'Shared', { limit: '1' }))).toEqual([shared[0]])
    expect(ids(await list('NAME', 'Shared', { limit: '1', after: shared[0]! }))).toEqual([shared[1]])
    expect(ids(await list('NAME', 'Shared', { limit: '1', before: shared[1]! }))).toEqual([shared[0]])
    expect(ids(await list('NAME', 'Nobody'))).toEqual([])
    expect(ids(await list('USERNAME', 'User 1'))).toEqual(
      [a.organizationId, b.organizationId, c.organizationId].sort(),
    )
    expect(ids(await list('USERNAME', 'User 1', { limit: '2', before: c.organizationId }))).toEqual(
      [a.organizationId, b.organizationId, c.organizationId]
        .sort()
        .filter((id) => id < c.organizationId)
        .slice(-2),
    )
    const key = a.keys[0]!.publicKey
    expect(ids(await list('PUBLIC_KEY', key))).toEqual([a.organizationId])
    expect(ids(await list('PUBLIC_KEY', `0x${key.toUpperCase()}`))).toEqual([a.organizationId])
    const address = a.addresses![0]!
    for (const spelling of [address, address.toLowerCase(), toChecksumAddress(address)])
      expect(ids(await list('WALLET_ACCOUNT_ADDRESS', spelling))).toEqual([a.organizationId])
    expect(ids(await list('EMAIL', ' Mail@Example.com '))).toEqual([mail])
    expect(ids(await list('PHONE_NUMBER', '+15551234567'))).toEqual([mail])
    expect(ids(await list('CREDENTIAL_ID', 'no-such-credential'))).toEqual([])
    // No filter: every sub-organization, as before.
    expect(ids(await h.query('list_suborgs', { paginationOptions: { limit: '100' } }))).toEqual(
      [a.organizationId, b.organizationId, c.organizationId, mail].sort(),
    )
  })
})
