import { readAuthenticatorParams, refuseFields } from '../domain/params.ts'
import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { addAuthenticators, findUser } from '../domain/users.ts'
import { Reader } from '../kernel/Reader.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Registers passkeys (verified attestations) on a user. The service's `CREATE_AUTHENTICATORS`
 * already takes the attestation shape the published types give `CREATE_AUTHENTICATORS_V2`.
 */
export const createAuthenticators = defineActivity('create_authenticators', {
  // Its record shows the passkeys it registers (kernel/passkeySightings.ts).
  passkeyParameters: ['authenticators[]'],
  parse: (r, type) => ({
    userId: r.string('userId', { max: 200 }),
    authenticators: r.array(
      'authenticators',
      (value, field) => {
        // V1's items named their user; V2's user is the intent's `userId` alone.
        if (type === 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2')
          refuseFields(new Reader(value, field), ['userId'], type)
        return readAuthenticatorParams(value, field)
      },
      { min: 1, max: 10 },
    ),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    await checkResourceLimit(ctx.tx, 'authenticatorsPerUser', {
      owner: user.id,
      adding: p.authenticators.length,
      field: 'parameters.authenticators',
    })
    return {
      authenticatorIds: await addAuthenticators(ctx, user, p.authenticators, 'parameters.authenticators'),
    }
  },
})
