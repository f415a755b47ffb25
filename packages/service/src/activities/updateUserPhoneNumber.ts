import { readContactUpdate, updateContact } from '../domain/contacts.ts'
import { defineActivity } from '../kernel/registry.ts'

/**
 * Sets or removes (`''`) a user's phone number; verified only with a verification token its key
 * redeems (see `updateContact`).
 */
export const updateUserPhoneNumber = defineActivity('update_user_phone_number', {
  // The verification token it redeems is no reader's to take from its record (`bearerParameters`).
  bearerParameters: ['verificationToken', 'clientSignature'],
  parse: (r) => {
    const { userId, contact, verificationToken, clientSignature } = readContactUpdate(r, 'phone')
    return {
      userId,
      userPhoneNumber: contact,
      ...(verificationToken !== undefined ? { verificationToken } : {}),
      ...(clientSignature !== undefined ? { clientSignature } : {}),
    }
  },
  run: (ctx, p) => updateContact(ctx, 'phone', { ...p, contact: p.userPhoneNumber }),
})
