import { readContactUpdate, updateContact } from '../domain/contacts.ts'
import { defineActivity } from '../registry.ts'

/** Sets (with a verification token proving it) or removes (`''`) a user's phone number. */
export const updateUserPhoneNumber = defineActivity('update_user_phone_number', {
  parse: (r) => {
    const { userId, contact, verificationToken } = readContactUpdate(r, 'phone')
    return {
      userId,
      userPhoneNumber: contact,
      ...(verificationToken !== undefined ? { verificationToken } : {}),
    }
  },
  run: (ctx, p) => updateContact(ctx, 'phone', { ...p, contact: p.userPhoneNumber }),
})
