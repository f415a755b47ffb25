/**
 * The top-level organization of `organization`: its parent for a sub-organization (sub-organizations
 * make none of their own), else itself. What an operator configures (gas caps, sign-in, providers)
 * is set there and holds for its whole tree.
 */
export const topLevelOf = (organization: { id: string; parentOrganizationId?: string | undefined }): string =>
  organization.parentOrganizationId ?? organization.id
