import { readContactUpdate, updateContact } from '../domain/contacts.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Sets or removes (`''`) a user's e-mail address; verified only with a verification token its
 * key redeems (see `updateContact`).
 */
export const updateUserEmail = defineActivity('update_user_email', {
  // The verification token it redeems is no reader's to take from its record (`bearerParameters`).
  bearerParameters: ['verificationToken', 'clientSignature'],
  parse: (r) => {
    const { userId, contact, verificationToken, clientSignature } = readContactUpdate(r, 'email')
    return {
      userId,
      userEmail: contact,
      ...(verificationToken !== undefined ? { verificationToken } : {}),
      ...(clientSignature !== undefined ? { clientSignature } : {}),
    }
  },
  run: (ctx, p) => updateContact(ctx, 'email', { ...p, contact: p.userEmail }),
})
