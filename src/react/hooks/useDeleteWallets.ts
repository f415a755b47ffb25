import type { UseMutationResult } from '@tanstack/react-query'
import type {
  DeleteWalletsParameters,
  DeleteWalletsReturnType,
} from '../../core/actions/activities/deleteWallets.ts'
import type { LatchkeyError } from '../../core/errors.ts'
import { deleteWalletsMutationOptions } from '../../core/query/deleteWallets.ts'
import { type ClientParameter, type MutationParameter, useLatchkeyMutation } from './internal.ts'
import { useLatchkey } from './useLatchkey.ts'

export type UseDeleteWalletsParameters = ClientParameter &
  MutationParameter<DeleteWalletsReturnType, DeleteWalletsParameters>
export type UseDeleteWalletsReturnType = UseMutationResult<
  DeleteWalletsReturnType,
  LatchkeyError,
  DeleteWalletsParameters
>

/** Deletes wallets. */
export function useDeleteWallets(parameters: UseDeleteWalletsParameters = {}): UseDeleteWalletsReturnType {
  const client = useLatchkey(parameters)
  return useLatchkeyMutation<DeleteWalletsReturnType, DeleteWalletsParameters>(
    deleteWalletsMutationOptions(client),
    parameters.mutation,
  )
}
