import { readApiKeyParams } from '../domain/params.ts'
import { addApiKeys, findUser } from '../domain/users.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * API keys for a user. `CREATE_API_KEYS` and `CREATE_API_KEYS_V2` take one shape here: the
 * service's first version already required the `curveType` the published types add in V2.
 */
export const createApiKeys = defineActivity('create_api_keys', {
  parse: (r) => ({
    userId: r.string('userId', { max: 200 }),
    apiKeys: r.array('apiKeys', readApiKeyParams, { min: 1, max: 10 }),
  }),
  run: async (ctx, p) => {
    const user = await findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    return { apiKeyIds: await addApiKeys(ctx, user, p.apiKeys, { field: 'parameters.apiKeys' }) }
  },
})
