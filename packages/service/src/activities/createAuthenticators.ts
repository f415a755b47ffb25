import { readAuthenticatorParams } from '../domain/params.ts'
import { addAuthenticators, findUser } from '../domain/users.ts'
import { defineActivity } from '../registry.ts'

/** Registers passkeys (verified attestations) on a user. */
export const createAuthenticators = defineActivity('create_authenticators', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    authenticators: r.array('authenticators', readAuthenticatorParams, { min: 1, max: 10 }),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    return {
      authenticatorIds: await addAuthenticators(ctx, user, p.authenticators, 'parameters.authenticators'),
    }
  },
})
