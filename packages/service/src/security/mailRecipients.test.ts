// An e-mail address the service may later mail a code to is a plain address wherever it comes in
// (kernel/emailAddress.ts): a display name, list, comment or group spelling of someone's address
// (`n1<victim@example.com>`) read by the mailer as that address, while each spelling was a send
// budget of its own. Each entry point refuses them with a 400 naming its field, and keeps taking
// ordinary addresses (plus-tags, subdomains, other scripts).
import { PROXY_CONFIG_HEADER } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { isEmailAddress } from '../kernel/emailAddress.ts'
import { createHarness, type Harness, type Json, resultOf } from '../testing/harness.ts'

const VICTIM = 'victim@example.com'
const SPELLINGS = [
  `n1<${VICTIM}>`,
  `"Bo" <${VICTIM}>`,
  `x,${VICTIM}`,
  `x;${VICTIM}`,
  `${VICTIM}(x)`,
  `x:${VICTIM};`,
  `"x"@example.com`,
  'x@[192.0.2.1]',
]
const ORDINARY = [
  VICTIM,
  'ada+otp@mail.example.co.uk',
  "o'brien@example.ie",
  'first.last-name_1@sub-domain.example.com',
  'jörg@bücher.de',
  'victim@ｅｘａｍｐｌｅ.com',
  '用户@例子.广告',
]

async function proxy(h: Harness, path: string, body: unknown) {
  const res = await h.service.app.request(`/v1/${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      [PROXY_CONFIG_HEADER]: h.service.dev.authProxyConfigId!,
      Origin: 'http://app.test',
    },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

const refusal = (reply: { status: number; body: Json }) => ({
  status: reply.status,
  field: reply.body?.details?.field,
})

const user = (userEmail: string) => ({
  userName: `u-${crypto.randomUUID()}`,
  userEmail,
  apiKeys: [],
  authenticators: [],
  oauthProviders: [],
  userTags: [],
})

describe('a plain e-mail address', () => {
  it('is an addr-spec alone: no display name, list, comment, group, quoted local part or domain literal', () => {
    expect(SPELLINGS.filter(isEmailAddress)).toEqual([])
    expect(ORDINARY.filter((address) => !isEmailAddress(address))).toEqual([])
    expect(
      ['a..b@x.io', '.a@x.io', 'a@x', 'a@-x.io', 'a\u200b@x.io', `${'a'.repeat(65)}@x.io`].filter(
        isEmailAddress,
      ),
    ).toEqual([])
  })
})

describe('every entry point of an e-mail address refuses any other spelling', () => {
  it('the auth proxy: otp_init, signup and the account lookup', async () => {
    const h = await createHarness()
    for (const spelling of SPELLINGS) {
      const replies = [
        await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: spelling }),
        await proxy(h, 'signup', { userEmail: spelling, verificationToken: 'x' }),
        await proxy(h, 'signup_v2', { userEmail: spelling, verificationToken: 'x' }),
        await proxy(h, 'account', { filterType: 'EMAIL', filterValue: spelling }),
      ]
      expect(replies.map(refusal)).toEqual([
        { status: 400, field: 'parameters.contact' },
        { status: 400, field: 'userEmail' },
        { status: 400, field: 'userEmail' },
        { status: 400, field: 'filterValue' },
      ])
      expect(replies.map((reply) => reply.body.details.errorCode)).toEqual(Array(4).fill('CONTACT_INVALID'))
    }
    // Control: ordinary addresses are looked up (no account) and sent codes.
    for (const address of ORDINARY.slice(0, 5)) {
      expect(await proxy(h, 'account', { filterType: 'EMAIL', filterValue: address })).toEqual({
        status: 200,
        body: { organizationId: null },
      })
      expect((await proxy(h, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: address })).status).toBe(200)
    }
  })

  it('the activity API: init_otp, create_users, create_sub_organization, update_user_email, latchkey_import_user', async () => {
    const h = await createHarness()
    const created = resultOf(
      'create_users',
      await h.submit('create_users', { users: [user('ada@example.com')] }),
    )
    const userId = created.userIds[0] as string
    for (const spelling of SPELLINGS) {
      const replies = [
        await h.submit('init_otp', { otpType: 'OTP_TYPE_EMAIL', contact: spelling }),
        await h.submit('create_users', { users: [user(spelling)] }),
        await h.submit('create_sub_organization', {
          subOrganizationName: `sub-${crypto.randomUUID()}`,
          rootUsers: [user(spelling)],
          rootQuorumThreshold: 1,
        }),
        await h.submit('update_user_email', { userId, userEmail: spelling }),
        await h.submit('latchkey_import_user', { externalId: `ext-${crypto.randomUUID()}`, email: spelling }),
      ]
      expect(replies.map(refusal)).toEqual([
        { status: 400, field: 'parameters.contact' },
        { status: 400, field: 'parameters.users[0].userEmail' },
        { status: 400, field: 'parameters.rootUsers[0].userEmail' },
        { status: 400, field: 'parameters.userEmail' },
        { status: 400, field: 'parameters.email' },
      ])
    }
    // Control: ordinary addresses are taken.
    const ordinary = await h.submit('create_users', { users: ORDINARY.map(user) })
    expect(resultOf('create_users', ordinary).userIds).toHaveLength(ORDINARY.length)
    expect(
      (await h.submit('update_user_email', { userId, userEmail: 'ada+new@mail.example.com' })).status,
    ).toBe(200)
  })
})
