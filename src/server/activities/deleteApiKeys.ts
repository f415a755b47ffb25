import type { CredentialType } from '../../protocol/index.ts'
import { findUser } from '../domain/users.ts'
import { defineActivity } from '../registry.ts'
import { ServiceError } from '../ServiceError.ts'

const SESSION_CREDENTIALS: ReadonlySet<CredentialType> = new Set<CredentialType>([
  'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256',
  'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_OAUTH_KEY_P256',
  'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256',
  'CREDENTIAL_TYPE_LOGIN',
])

/** Revokes API keys (also how a client logs out: it deletes its session key). */
export const deleteApiKeys = defineActivity('delete_api_keys', {
  // A session key belongs to whichever user logged in, root or not; it may revoke its own keys.
  allowNonRoot: true,
  parse: (r) => ({ userId: r.string('userId', { max: 200 }), apiKeyIds: r.ids('apiKeyIds', { min: 1 }) }),
  run: (ctx, p) => {
    const user = findUser(ctx.tx, ctx.organization.id, p.userId, 'parameters.userId')
    const isRoot = ctx.organization.rootUserIds.includes(ctx.caller.userId)
    if (!isRoot && ctx.caller.userId !== user.id)
      throw new ServiceError(
        'PERMISSION_DENIED',
        'only root users may delete other users\u2019 keys',
        'parameters.userId',
      )
    // Session and login keys are short-lived and do not keep an account reachable; a durable
    // key, a passkey, or a way to sign in again (e-mail, phone, OAuth) does.
    const deleting = new Set(p.apiKeyIds)
    const canSignInAgain =
      Boolean(user.userEmail || user.userPhoneNumber) ||
      ctx.tx.findBy('oauthProviders', 'userId', user.id).length > 0
    const durableLeft =
      ctx.tx
        .findBy('apiKeys', 'userId', user.id)
        .filter((key) => !deleting.has(key.id) && !SESSION_CREDENTIALS.has(key.credentialType)).length +
      ctx.tx.findBy('authenticators', 'userId', user.id).length
    p.apiKeyIds.forEach((id, index) => {
      const key = ctx.tx.get('apiKeys', id)
      if (!key || key.userId !== user.id)
        throw new ServiceError(
          'API_KEY_NOT_FOUND',
          `user ${user.id} has no API key ${id}`,
          `parameters.apiKeyIds[${index}]`,
        )
      ctx.tx.delete('apiKeys', id)
    })
    if (
      !canSignInAgain &&
      durableLeft === 0 &&
      ctx.organization.rootUserIds.includes(user.id) &&
      ctx.organization.rootUserIds.length === 1
    )
      throw new ServiceError(
        'FIELD_INVALID',
        'this would leave the only root user without any credential',
        'parameters.apiKeyIds',
      )
    return { apiKeyIds: p.apiKeyIds }
  },
})
