import { lazy, Suspense } from 'react'
import type { MfaRequiredError } from '../../core/errors.ts'
import { errorCodeOf } from '../ui/errorMessage.ts'
import { Spinner } from '../ui/parts.tsx'
import type { StepUpProps } from './StepUp.tsx'

// The challenge loads only when an action waits for a second factor (its own chunk).
const StepUpChunk = lazy(() => import('./StepUp.tsx').then((m) => ({ default: m.StepUp })))

/** True for the error of an action waiting for the user's second factor (`MfaRequiredError`). */
export const isMfaRequired = (error: unknown): error is MfaRequiredError<unknown> =>
  errorCodeOf(error) === 'MFA_REQUIRED'

/** `<StepUp/>`, loaded on first use. */
export function LazyStepUp<T>(props: StepUpProps<T>) {
  return (
    <Suspense
      fallback={
        <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
          <Spinner />
          {props.ui.t('loading')}
        </p>
      }
    >
      <StepUpChunk {...(props as StepUpProps<unknown>)} onDone={props.onDone as (result: unknown) => void} />
    </Suspense>
  )
}
