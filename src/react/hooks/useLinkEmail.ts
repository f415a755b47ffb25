import type { UseMutationResult } from '@tanstack/react-query'
import type {
  LinkEmailParameters,
  LinkEmailReturnType,
  StartLinkEmailParameters,
  StartLinkEmailReturnType,
} from '../../core/actions/activities/linkEmail.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { linkEmailMutationOptions, startLinkEmailMutationOptions } from '../../core/query/linkEmail.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseLinkEmailParameters = ClientParameter & {
  mutation?: MutationParameter<LinkEmailReturnType, LinkEmailParameters>['mutation']
}
export type UseLinkEmailReturnType = {
  /** Sends the code (`startLinkEmail`). */
  start: UseMutationResult<StartLinkEmailReturnType, LatchkeyError, StartLinkEmailParameters>
  /** Checks it and stores the address verified (`linkEmail`). */
  link: UseMutationResult<LinkEmailReturnType, LatchkeyError, LinkEmailParameters>
}

/** Links an e-mail address to the signed-in account, proven by a code sent to it. */
export function useLinkEmail(parameters: UseLinkEmailParameters = {}): UseLinkEmailReturnType {
  const client = useLatchkey(parameters)
  const start = useLatchkeyMutation<StartLinkEmailReturnType, StartLinkEmailParameters>(
    startLinkEmailMutationOptions(client),
    undefined,
  )
  const link = useLatchkeyMutation<LinkEmailReturnType, LinkEmailParameters>(
    linkEmailMutationOptions(client),
    parameters.mutation,
  )
  return { start, link }
}
