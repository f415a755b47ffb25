/**
 * `timestampMs` values for the calls the auth proxy forwards, strictly increasing: the activity API
 * answers an exact replay of signed bytes with the activity they created, and two identical calls
 * in one millisecond (a user retrying a wrong code) must each be a new activity.
 */
export function timestampSequence(now: () => number): () => string {
  let last = 0
  return () => {
    last = Math.max(now(), last + 1)
    return String(last)
  }
}
