import type { QueryClient } from '@tanstack/react-query'
import { createContext } from 'react'
import type { Latchkey } from '../core/createLatchkey.ts'

export interface LatchkeyContextValue {
  client: Latchkey
  queryClient: QueryClient
}

export const LatchkeyContext = createContext<LatchkeyContextValue | undefined>(undefined)
