/**
 * The one rule for an e-mail address the service may later send mail to (a one-time code, an MFA
 * code), shared by every place that accepts one: `init_otp`, the proxy's sign-up and account
 * lookup, a user's `userEmail` (create, update) and an imported user's `email`.
 *
 * A plain addr-spec: a dot-atom local part (RFC 5322 `atext`, and letters, marks and digits of any
 * script as RFC 6532 allows), `@`, and a domain of two or more labels of letters, marks, digits and
 * inner hyphens (IDN and full-width spellings included). No display name, comment, group, quoted
 * local part, domain literal, list separator or whitespace: a mailer reads `n1<victim@x.io>`,
 * `a,victim@x.io`, `victim@x.io(a)` or `a:victim@x.io;` as an address list and delivers to
 * victim@x.io, while the per-contact send budget would count each spelling as a mailbox of its own.
 * At most 64 characters before the `@` and 254 in all (RFC 5321).
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\p{L}\\p{M}\\p{N}]"
const LABEL = '[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}-]{0,61}[\\p{L}\\p{M}\\p{N}])?'

/** A plain e-mail address (see the module's comment), as a pattern for `Reader.string`. */
export const EMAIL_ADDRESS = new RegExp(
  `^(?=[^@]{1,64}@)(?=[^]{3,254}$)${ATEXT}+(?:\\.${ATEXT}+)*@${LABEL}(?:\\.${LABEL})+$`,
  'u',
)

/** The hint a refusal gives for a value that is not `EMAIL_ADDRESS`. */
export const EMAIL_ADDRESS_HINT =
  'a plain e-mail address (name@example.com: no display name, list or comment)'

/** True when `value` is a plain e-mail address (see the module's comment). */
export const isEmailAddress = (value: string): boolean => EMAIL_ADDRESS.test(value)
