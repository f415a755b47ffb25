import type { enApproval } from '../en/approval.ts'
import type { Translation } from '../strings.ts'

/** Spanish: `<ActivityApproval/>`. */
export const approval: Translation<typeof enApproval> = {
  approvalTitle: 'Pendiente de aprobación',
  approvalDescription: 'Esta acción necesita más aprobaciones antes de ejecutarse.',
  approvalType: 'Acción',
  approvalRequested: 'Solicitada',
  approvalVotes: 'Aprobaciones',
  approvalVotesCount: '{count} hasta ahora',
  approvalFingerprint: 'Huella',
  approve: 'Aprobar',
  reject: 'Rechazar',
  approvedTitle: 'Has aprobado esta acción.',
  rejectedTitle: 'Has rechazado esta acción.',
  approvalCompleted: 'La acción se ha ejecutado.',
  approvalStatus: 'Estado',
  approvalPolicy: 'Solicitado por',
  approvalRootQuorum: 'Los usuarios raíz',
  approvalRequestedBy: 'por {name}',
  approvalDetails: 'Qué hace',
  approvalOtherTitle: 'Otros campos, que no son parámetros de esta acción ({count})',
  approvalOtherNote:
    'Llegaron con la solicitud, pero no están entre los parámetros de esta acción. Júzgala por los campos de arriba: los campos añadidos pueden estar ahí para confundir.',
  approvalUnknownTitle: 'Campos tal como se enviaron ({count})',
  approvalUnknownNote: 'Esta app no conoce los parámetros de esta acción: revisa cada campo.',
  approvalShowMore: 'Mostrar todos ({count} más)',
}
