// list_suborgs' EMAIL filter compares verified e-mails normalised (trimmed, lower-cased), and the
// auth proxy lower-cases every e-mail it looks up (OTP login, sign-up's conflict check,
// /v1/account): an account whose e-mail the operator set as "Mixed@Example.com" must still be found
// by "mixed@example.com" now that the filter reads the users' e-mail index (57ca9fa), or that
// person's OTP login would find no account and their sign-up would make a second one.
import { describe, expect, it } from 'vitest'
import { createHarness, resultOf } from '../testing/harness.ts'

describe('list_suborgs by EMAIL', () => {
  it('finds an operator-set e-mail stored with capitals, as before', async () => {
    const h = await createHarness()
    const made = resultOf(
      'create_sub_organization',
      await h.submit('create_sub_organization', {
        subOrganizationName: 'Mixed',
        rootUsers: [
          {
            userName: 'Mixed',
            userEmail: 'Mixed@Example.com',
            apiKeys: [],
            authenticators: [],
            oauthProviders: [],
          },
        ],
        rootQuorumThreshold: 1,
      }),
    ).subOrganizationId
    const list = async (value: string) =>
      (await h.query('list_suborgs', { filterType: 'EMAIL', filterValue: value })).body.organizationIds
    // Control: the spelling as stored is found.
    expect(await list('Mixed@Example.com')).toEqual([made])
    // As the proxy looks it up (lower-cased), and as the pre-57ca9fa code found it.
    expect(await list('mixed@example.com')).toEqual([made])
  })
})
