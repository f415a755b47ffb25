// The account the tests of sessions and their credentials share: one root user, Pat, with two
// passkeys, "phone" and "laptop" (and `apiKeys` registered beside them), the phone's passkey to be
// removed from another device as a lost one is.
import type { ApiKeyParams } from '@latchkey/protocol'
import { type Harness, resultOf, type Stamper, softPasskey } from '../../src/testing/harness.ts'

/** A one-root account with passkeys "phone" and "laptop"; `removePhone` deletes the phone's, stamped by `as`. */
export async function twoDevices(
  h: Harness,
  { name = 'Two devices', apiKeys = [] }: { name?: string; apiKeys?: ApiKeyParams[] } = {},
) {
  const phone = softPasskey()
  const laptop = softPasskey()
  const created = resultOf(
    'create_sub_organization',
    await h.submit('create_sub_organization', {
      subOrganizationName: name,
      rootQuorumThreshold: 1,
      rootUsers: [
        {
          userName: 'Pat',
          apiKeys,
          authenticators: [phone.register(undefined, 'Phone'), laptop.register(undefined, 'Laptop')],
          oauthProviders: [],
        },
      ],
    }),
  )
  const organizationId = created.subOrganizationId as string
  const userId = created.rootUserIds[0] as string
  const users = await h.query('list_users', {}, { as: laptop, organizationId })
  const phoneId = (
    users.body.users[0].authenticators as { authenticatorId: string; credentialId: string }[]
  ).find((a) => a.credentialId === phone.credentialId)!.authenticatorId
  const removePhone = async (as: Stamper = laptop) => {
    h.clock.advance(1)
    resultOf(
      'delete_authenticators',
      await h.submit(
        'delete_authenticators',
        { userId, authenticatorIds: [phoneId] },
        { as, organizationId },
      ),
    )
  }
  return { phone, laptop, organizationId, userId, phoneId, removePhone }
}
