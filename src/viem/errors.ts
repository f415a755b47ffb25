import { BaseError } from 'viem'
import { LatchkeyError } from '../core/errors.ts'

/** A request the service refused or could not complete; `code` is the kit's error code. */
export class LatchkeyViemError extends BaseError {
  override name = 'LatchkeyViemError'
  /** The kit's error code (`details.errorCode` of the service), e.g. `FIELD_INVALID`. */
  readonly code: string
  constructor(cause: LatchkeyError) {
    super(cause.message, { cause, details: cause.code })
    this.code = cause.code
  }
}

/**
 * The activity waits for approval by more root users (a quorum above one). Approve it with
 * `approveActivity` (or `<ActivityApproval/>`), then read its result with `getActivity`.
 */
export class LatchkeyConsensusNeededError extends BaseError {
  override name = 'LatchkeyConsensusNeededError'
  readonly code = 'CONSENSUS_NEEDED'
  /** Id of the pending activity. */
  readonly activityId: string
  /** What `approveActivity({ fingerprint })` takes. */
  readonly fingerprint: string | undefined
  constructor(cause: LatchkeyError & { activity?: { id: string; fingerprint?: string } }) {
    const activityId = cause.activity?.id ?? String(cause.details.activityId ?? '')
    super(`Activity ${activityId} needs approval by more root users`, {
      cause,
      metaMessages: [`activityId: ${activityId}`],
    })
    this.activityId = activityId
    this.fingerprint = cause.activity?.fingerprint
  }
}

/** Runs a kit call, turning its errors into viem `BaseError`s (so `error.walk()` finds them). */
export async function viemErrors<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    if (error instanceof LatchkeyError)
      throw error.code === 'CONSENSUS_NEEDED'
        ? new LatchkeyConsensusNeededError(error)
        : new LatchkeyViemError(error)
    throw error
  }
}

/** True when `error` (or any cause) is a consensus-needed error; gives its activity id via `walk`. */
export const isLatchkeyConsensusNeededError = (error: unknown): boolean =>
  error instanceof BaseError && error.walk((e) => e instanceof LatchkeyConsensusNeededError) !== null
