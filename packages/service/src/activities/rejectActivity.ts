import { defineActivity } from '../kernel/registry.ts'
import { voteOnActivity } from './voteOnActivity.ts'

/** A user's rejection of an activity awaiting consensus (root quorum or a policy's); answers with that activity. */
export const rejectActivity = defineActivity('reject_activity', {
  skipConsensus: true,
  // Any user of the organization may vote; the decision counts the vote only where it can matter.
  selfService: true,
  parse: (r) => ({ fingerprint: r.string('fingerprint', { max: 128 }) }),
  run: (ctx, p) => voteOnActivity(ctx, p.fingerprint, 'VOTE_SELECTION_REJECTED'),
})
