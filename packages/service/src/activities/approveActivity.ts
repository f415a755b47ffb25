import { defineActivity } from '../registry.ts'
import { voteOnActivity } from './voteOnActivity.ts'

/** A root user's approval of an activity awaiting consensus; answers with that activity. */
export const approveActivity = defineActivity('approve_activity', {
  skipConsensus: true,
  parse: (r) => ({ fingerprint: r.string('fingerprint', { max: 128 }) }),
  run: (ctx, p) => voteOnActivity(ctx, p.fingerprint, 'VOTE_SELECTION_APPROVED'),
})
