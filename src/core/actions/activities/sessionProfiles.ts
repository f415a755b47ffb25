// Session profiles (issue 37, docs/agents.md): a login naming `sessionProfileId` gets a session
// the profile's scope confines. The published create_session_profile and queries, and Latchkey's
// update and delete.
import type { ActivityParameters, ActivityResult, QueryRequest, QueryResponse } from '@latchkey/protocol'
import { query, submit } from '../../transport/activity.ts'
import type { Latchkey } from '../../types.ts'
import { type ActionOptions, splitOptions } from '../options.ts'
import { type QueryActionOptions, queryBody } from '../queries/queryBody.ts'

export type CreateSessionProfileParameters = ActivityParameters<'create_session_profile'> & ActionOptions
export type CreateSessionProfileReturnType = ActivityResult<'create_session_profile'>

/** Creates a session profile (`create_session_profile`): a name, a scope (a policy condition) and a lifetime. */
export async function createSessionProfile(
  client: Latchkey,
  parameters: CreateSessionProfileParameters,
): Promise<CreateSessionProfileReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (
    await submit(
      client,
      'create_session_profile',
      activityParameters as ActivityParameters<'create_session_profile'>,
      options,
    )
  ).result
}

export type UpdateSessionProfileParameters = ActivityParameters<'latchkey_update_session_profile'> &
  ActionOptions
export type UpdateSessionProfileReturnType = ActivityResult<'latchkey_update_session_profile'>

/** Changes a profile's name, scope, lifetime or notes (`latchkey_update_session_profile`); live sessions follow the new scope. */
export async function updateSessionProfile(
  client: Latchkey,
  parameters: UpdateSessionProfileParameters,
): Promise<UpdateSessionProfileReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (
    await submit(
      client,
      'latchkey_update_session_profile',
      activityParameters as ActivityParameters<'latchkey_update_session_profile'>,
      options,
    )
  ).result
}

export type DeleteSessionProfileParameters = ActivityParameters<'latchkey_delete_session_profile'> &
  ActionOptions
export type DeleteSessionProfileReturnType = ActivityResult<'latchkey_delete_session_profile'>

/** Deletes a profile (`latchkey_delete_session_profile`): every session issued under it is refused at once, reads included, and its key deleted shortly after. */
export async function deleteSessionProfile(
  client: Latchkey,
  parameters: DeleteSessionProfileParameters,
): Promise<DeleteSessionProfileReturnType> {
  const [activityParameters, options] = splitOptions(parameters)
  return (
    await submit(
      client,
      'latchkey_delete_session_profile',
      activityParameters as ActivityParameters<'latchkey_delete_session_profile'>,
      options,
    )
  ).result
}

export type GetSessionProfilesParameters = Omit<QueryRequest<'get_session_profiles'>, 'organizationId'> &
  QueryActionOptions
export type GetSessionProfilesReturnType = QueryResponse<'get_session_profiles'>

/** The organization's session profiles (`get_session_profiles`). */
export async function getSessionProfiles(
  client: Latchkey,
  parameters: GetSessionProfilesParameters = {},
): Promise<GetSessionProfilesReturnType> {
  const [body, options] = await queryBody(client, parameters)
  return query(client, 'get_session_profiles', body as QueryRequest<'get_session_profiles'>, options)
}
