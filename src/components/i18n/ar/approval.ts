import type { enApproval } from '../en/approval.ts'
import type { Translation } from '../strings.ts'

/** Arabic: `<ActivityApproval/>`. */
export const approval: Translation<typeof enApproval> = {
  approvalTitle: 'بانتظار الموافقة',
  approvalDescription: 'يحتاج هذا الإجراء إلى موافقات إضافية قبل تنفيذه.',
  approvalType: 'الإجراء',
  approvalRequested: 'تاريخ الطلب',
  approvalVotes: 'الموافقات',
  approvalVotesCount: '{count} حتى الآن',
  approvalFingerprint: 'البصمة',
  approve: 'موافقة',
  reject: 'رفض',
  approvedTitle: 'وافقت على هذا الإجراء.',
  rejectedTitle: 'رفضت هذا الإجراء.',
  approvalCompleted: 'تم تنفيذ الإجراء.',
  approvalStatus: 'الحالة',
  approvalPolicy: 'بطلب من',
  approvalRootQuorum: 'المستخدمون الجذريون',
  approvalRequestedBy: 'بواسطة {name}',
  approvalDetails: 'ما الذي يفعله',
  approvalOtherTitle: 'حقول أخرى ليست من معاملات هذا الإجراء ({count})',
  approvalOtherNote:
    'وصلت مع الطلب لكنها ليست من معاملات هذا الإجراء. احكم عليه من الحقول أعلاه: قد تُضاف حقول بغرض التضليل.',
  approvalUnknownTitle: 'الحقول كما أُرسلت ({count})',
  approvalUnknownNote: 'لا يعرف هذا التطبيق معاملات هذا الإجراء: تحقّق من كل حقل.',
  approvalShowMore: 'عرض الكل ({count} أخرى)',
}
