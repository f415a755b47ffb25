import { useContext } from 'react'
import type { Latchkey } from '../../core/createLatchkey.ts'
import { LatchkeyContext } from '../context.ts'
import { LatchkeyProviderNotFoundError } from '../errors.ts'

export type UseLatchkeyParameters = { client?: Latchkey | undefined }

/** The Latchkey client: the explicit one, else the provider's; throws a named error when neither. */
export function useLatchkey(parameters: UseLatchkeyParameters = {}): Latchkey {
  const context = useContext(LatchkeyContext)
  const client = parameters.client ?? context?.client
  if (!client) throw new LatchkeyProviderNotFoundError()
  return client
}
