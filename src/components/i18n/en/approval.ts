/** English strings of `<ActivityApproval/>`. */
export const enApproval = {
  approvalTitle: 'Waiting for approval',
  approvalDescription: 'This action needs more approvals before it runs.',
  approvalType: 'Action',
  approvalRequested: 'Requested',
  approvalVotes: 'Approvals',
  approvalVotesCount: '{count} so far',
  approvalFingerprint: 'Fingerprint',
  approve: 'Approve',
  reject: 'Reject',
  approvedTitle: 'You approved this action.',
  rejectedTitle: 'You rejected this action.',
  approvalCompleted: 'The action has run.',
  approvalStatus: 'Status',
  approvalPolicy: 'Asked by',
  approvalRootQuorum: 'The root users',
}
