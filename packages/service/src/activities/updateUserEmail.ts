import { readContactUpdate, updateContact } from '../domain/contacts.ts'
import { defineActivity } from '../registry.ts'

/** Sets (with a verification token proving it) or removes (`''`) a user's e-mail address. */
export const updateUserEmail = defineActivity('update_user_email', {
  parse: (r) => {
    const { userId, contact, verificationToken } = readContactUpdate(r, 'email')
    return { userId, userEmail: contact, ...(verificationToken !== undefined ? { verificationToken } : {}) }
  },
  run: (ctx, p) => updateContact(ctx, 'email', { ...p, contact: p.userEmail }),
})
