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
  approvalRequestedBy: 'by {name}',
  approvalDetails: 'What it does',
  approvalHiddenWarning:
    'Some fields below contain hidden or direction-changing characters, shown as U+ codes. A name with one can pass for another: check them before you approve.',
  approvalOtherTitle: 'Other fields, not parameters of this action ({count})',
  approvalOtherNote:
    'They came with the request but are not among this action’s parameters. Judge it by the fields above: added fields can be there to mislead.',
  approvalUnknownTitle: 'Fields as sent ({count})',
  approvalUnknownNote: 'This app does not know the parameters of this action: check every field.',
  approvalShowMore: 'Show all ({count} more)',
}
