import { checkResourceLimit } from '../domain/resourceLimits.ts'
import { defineActivity } from '../kernel/registry.ts'

/** Stores an on-ramp provider's credentials (secrets arrive client-encrypted and are sealed again). */
export const createFiatOnRampCredential = defineActivity('create_fiat_on_ramp_credential', {
  // The operator's on-ramp secrets are sealed into the credential's row; no reader of the
  // organization takes them from the activity's record (`bearerParameters`).
  bearerParameters: ['encryptedSecretApiKey', 'encryptedPrivateApiKey'],
  parse: (r) => {
    const projectId = r.optString('projectId', { max: 256 })
    const encryptedPrivateApiKey = r.optString('encryptedPrivateApiKey', { max: 8192 })
    const sandboxMode = r.optBool('sandboxMode')
    return {
      onrampProvider: r.string('onrampProvider', {
        max: 100,
        pattern: /^FIAT_ON_RAMP_PROVIDER_[A-Z0-9_]+$/,
        hint: 'FIAT_ON_RAMP_PROVIDER_<NAME>',
      }),
      ...(projectId !== undefined ? { projectId } : {}),
      publishableApiKey: r.string('publishableApiKey', { max: 1024 }),
      encryptedSecretApiKey: r.string('encryptedSecretApiKey', { max: 8192 }),
      ...(encryptedPrivateApiKey !== undefined ? { encryptedPrivateApiKey } : {}),
      ...(sandboxMode !== undefined ? { sandboxMode } : {}),
    }
  },
  run: async (ctx, p) => {
    await checkResourceLimit(ctx.tx, 'fiatCredentialsPerOrganization', {
      owner: ctx.organization.id,
      adding: 1,
      field: 'parameters.onrampProvider',
    })
    const id = ctx.newId()
    await ctx.tx.put('fiatCredentials', {
      id,
      organizationId: ctx.organization.id,
      onrampProvider: p.onrampProvider,
      ...(p.projectId !== undefined ? { projectId: p.projectId } : {}),
      publishableApiKey: p.publishableApiKey,
      sealedSecretApiKey: ctx.runtime.seal(p.encryptedSecretApiKey),
      ...(p.encryptedPrivateApiKey !== undefined
        ? { sealedPrivateApiKey: ctx.runtime.seal(p.encryptedPrivateApiKey) }
        : {}),
      sandboxMode: p.sandboxMode ?? false,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    return { fiatOnRampCredentialId: id }
  },
})
