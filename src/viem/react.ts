'use client'
/**
 * `latchkey/viem/react`: `useLatchkeyAccount`, the signed-in user's viem account for a client
 * component. Apart from `latchkey/viem` so that server code (a Server Component, a route
 * handler) can import `toLatchkeyAccount` without loading React's client APIs.
 */
import { useMemo } from 'react'
import type { Address } from 'viem'
import type { Latchkey } from '../core/createLatchkey.ts'
import { useLatchkey } from '../react/hooks/useLatchkey.ts'
import { useSession } from '../react/hooks/useSession.ts'
import { useWalletAccounts } from '../react/hooks/useWalletAccounts.ts'
import { type LatchkeyAccount, toLatchkeyAccount } from './account.ts'

export type UseLatchkeyAccountParameters = {
  /** The account's Ethereum address. @default the signed-in user's first Ethereum account */
  address?: Address | undefined
  client?: Latchkey | undefined
  organizationId?: string | undefined
  /** Sign with this session instead of the active one. */
  sessionId?: string | undefined
}

/**
 * The signed-in user's Ethereum account as a viem `LocalAccount` (see `toLatchkeyAccount`), for a
 * component to hand to viem (`walletClient.sendTransaction({ account, … })`). `undefined` while
 * nobody is signed in or the user has no Ethereum account yet.
 */
export function useLatchkeyAccount(
  parameters: UseLatchkeyAccountParameters = {},
): LatchkeyAccount | undefined {
  const { address, organizationId, sessionId } = parameters
  const client = useLatchkey({ client: parameters.client })
  const signedIn = !!useSession({ client, sessionId })
  const accounts = useWalletAccounts({
    client,
    sessionId,
    paginationOptions: { limit: '100' },
    query: { enabled: !address && signedIn },
  })
  const chosen =
    address ??
    (accounts.data?.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as
      | Address
      | undefined)
  return useMemo(
    () =>
      signedIn && chosen
        ? toLatchkeyAccount(client, { address: chosen, organizationId, sessionId })
        : undefined,
    [client, signedIn, chosen, organizationId, sessionId],
  )
}
