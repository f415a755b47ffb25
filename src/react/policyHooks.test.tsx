import { QueryClient } from '@tanstack/react-query'
import { act, renderHook, waitFor } from '@testing-library/react'
import { type ReactNode, useState } from 'react'
import { describe, expect, it } from 'vitest'
import { createClientFixture } from '../core/test/fixtures.ts'
import {
  LatchkeyProvider,
  useCreatePolicy,
  useCreateUsers,
  useDeletePolicy,
  usePolicies,
  usePolicy,
  useUpdatePolicy,
  useUsers,
} from './index.ts'

describe('policy and user hooks', () => {
  it('create, update and delete invalidate usePolicies / usePolicy; useCreateUsers invalidates useUsers', async () => {
    const fx = await createClientFixture()
    await fx.signUpDirect()
    function Providers({ children }: { children: ReactNode }) {
      const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: false } } }))
      return (
        <LatchkeyProvider client={fx.client} queryClient={queryClient}>
          {children}
        </LatchkeyProvider>
      )
    }
    const { result, rerender } = renderHook(
      ({ policyId }: { policyId?: string }) => ({
        policies: usePolicies(),
        policy: usePolicy({ policyId }),
        create: useCreatePolicy(),
        update: useUpdatePolicy(),
        remove: useDeletePolicy(),
        users: useUsers(),
        createUsers: useCreateUsers(),
      }),
      { wrapper: Providers, initialProps: {} },
    )
    await waitFor(() => expect(result.current.policies.data).toEqual({ policies: [] }))
    expect(result.current.policy.fetchStatus).toBe('idle') // waits for a policyId
    const { policyId } = await act(() =>
      result.current.create.mutateAsync({
        policyName: 'No exports',
        effect: 'EFFECT_DENY',
        condition: "activity.action == 'EXPORT'",
        notes: '',
      }),
    )
    await waitFor(() =>
      expect(result.current.policies.data?.policies.map((p) => p.policyName)).toEqual(['No exports']),
    )
    rerender({ policyId })
    await waitFor(() => expect(result.current.policy.data?.policy.effect).toBe('EFFECT_DENY'))
    await act(() => result.current.update.mutateAsync({ policyId, policyNotes: 'checked' }))
    await waitFor(() => expect(result.current.policy.data?.policy.notes).toBe('checked'))
    await act(() => result.current.remove.mutateAsync({ policyId }))
    await waitFor(() => expect(result.current.policies.data).toEqual({ policies: [] }))

    await waitFor(() => expect(result.current.users.data?.users).toHaveLength(1))
    await act(() =>
      result.current.createUsers.mutateAsync({
        users: [{ userName: 'Back end', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      }),
    )
    await waitFor(() => expect(result.current.users.data?.users.map((u) => u.userName)).toContain('Back end'))
  })
})
