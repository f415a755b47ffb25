import { FieldError } from '../kernel/base/errors.ts'
import type { ActivityContext, ServicePlugin, SubOrganizationHookContext } from '../kernel/registry.ts'

type Hooks = NonNullable<ServicePlugin['subOrganization']>

/**
 * The sign-in plugin's checks of `create_sub_organization` (OIDC tokens, verification tokens),
 * reused for changes to an existing account: `subOrganization` is the organization the activity
 * runs in and `organization` its parent, so "one account per identity or contact" is checked
 * across the parent's sub-organizations exactly as at sign-up. A top-level organization is its
 * own parent here.
 */
export async function accountHook<K extends keyof Hooks>(
  ctx: ActivityContext,
  name: K,
  field: string,
): Promise<{ hook: NonNullable<Hooks[K]>; hookContext: SubOrganizationHookContext }> {
  const hook = ctx.registry.plugins.map((plugin) => plugin.subOrganization?.[name]).find((h) => h)
  if (!hook)
    throw new FieldError({
      field,
      message: `this service has no sign-in plugin that checks ${name === 'oauthProviders' ? 'OIDC tokens' : 'verification tokens'}`,
    })
  const parentId = ctx.organization.parentOrganizationId
  const parent = parentId !== undefined ? await ctx.tx.get('organizations', parentId) : undefined
  return {
    hook: hook as NonNullable<Hooks[K]>,
    hookContext: { ...ctx, organization: parent ?? ctx.organization, subOrganization: ctx.organization },
  }
}
