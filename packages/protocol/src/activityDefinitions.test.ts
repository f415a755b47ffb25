import { describe, expect, it } from 'vitest'
import {
  ACTIVITIES,
  ACTIVITY_PATHS,
  type ActivityFacts,
  type ActivityMap,
  type ActivityRegistry,
  activityDefinitions,
  QUERIES,
  QUERY_PATHS,
  wireKeysOf,
} from './index.ts'

/** A toy activity added the way a real one is: its types in the map, its facts in the registry. */
interface ToyMap extends ActivityMap {
  toy_echo: { parameters: { text: string }; result: { text: string } }
}

const TOY_FACTS: ActivityFacts = {
  types: ['ACTIVITY_TYPE_TOY_ECHO_V2', 'ACTIVITY_TYPE_TOY_ECHO'],
  resource: 'USER',
  action: 'UPDATE',
  proxyUser: false,
  readOnly: true,
}

describe('the activity registry', () => {
  it('takes a new activity as one entry and derives its wire names', () => {
    const registry: ActivityRegistry<ToyMap> = {
      ...ACTIVITIES,
      ...activityDefinitions<Pick<ToyMap, 'toy_echo'>>({ toy_echo: TOY_FACTS }),
    }
    expect(registry.toy_echo).toEqual({
      ...TOY_FACTS,
      type: 'ACTIVITY_TYPE_TOY_ECHO_V2',
      intentKey: 'toyEchoIntentV2',
      resultKey: 'toyEchoResult',
    })
    expect(
      activityDefinitions<Pick<ToyMap, 'toy_echo'>>({ toy_echo: { ...TOY_FACTS, versionedResult: true } })
        .toy_echo.resultKey,
    ).toBe('toyEchoResultV2')
  })

  it('does not compile when an activity leaves its entry or one of its facts out', () => {
    // @ts-expect-error toy_echo has no entry
    const withoutEntry: ActivityRegistry<ToyMap> = ACTIVITIES
    const withoutResource = activityDefinitions<Pick<ToyMap, 'toy_echo'>>({
      // @ts-expect-error an entry without its policy resource
      toy_echo: { types: ['ACTIVITY_TYPE_TOY_ECHO'], action: 'UPDATE', proxyUser: false, readOnly: false },
    })
    expect([withoutEntry, withoutResource]).toHaveLength(2)
  })

  it('names the keys of an activity submitted as an older accepted type after that type', () => {
    expect(
      wireKeysOf(
        'eth_send_transaction',
        ACTIVITIES.eth_send_transaction,
        'ACTIVITY_TYPE_ETH_SEND_TRANSACTION',
      ),
    ).toEqual({
      intentKey: 'ethSendTransactionIntent',
      resultKey: 'ethSendTransactionResult',
    })
    expect(ACTIVITIES.eth_send_transaction).toMatchObject({
      intentKey: 'ethSendTransactionIntentV2',
      resultKey: 'ethSendTransactionResultV2',
    })
    expect(ACTIVITIES.sol_send_transaction.resultKey).toBe('solSendTransactionResultV2')
  })

  it('refuses a current type that does not name the path', () => {
    expect(() =>
      activityDefinitions<Pick<ToyMap, 'toy_echo'>>({
        toy_echo: { ...TOY_FACTS, types: ['ACTIVITY_TYPE_ECHO'] },
      }),
    ).toThrow('the current type of toy_echo must be ACTIVITY_TYPE_TOY_ECHO or ACTIVITY_TYPE_TOY_ECHO_V<n>')
  })

  it('lets the auth proxy user submit sign-in and sign-up only, and read the account lookup only', () => {
    expect(ACTIVITY_PATHS.filter((path) => ACTIVITIES[path].proxyUser)).toEqual([
      'otp_login',
      'create_sub_organization',
      'init_otp',
      'verify_otp',
      'oauth2_authenticate',
      'oauth_login',
    ])
    expect(QUERY_PATHS.filter((path) => QUERIES[path].proxyUser)).toEqual(['list_suborgs'])
  })

  it('marks as read-only only what computes an answer without changing anything', () => {
    expect(ACTIVITY_PATHS.filter((path) => ACTIVITIES[path].readOnly)).toEqual([
      'sign_raw_payloads',
      'sign_raw_payload',
      'sign_transaction',
      'create_read_only_session',
    ])
  })
})
