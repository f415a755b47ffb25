import { HASH_FUNCTIONS, PAYLOAD_ENCODINGS } from '@latchkey/protocol'
import { CryptoInputError, signRawPayload } from '../crypto/index.ts'
import { findAccount, withAccountKey } from '../domain/wallets.ts'
import { ApiError } from '../errors.ts'
import { stringItem } from '../pipeline/Reader.ts'
import { defineActivity } from '../registry.ts'

/** Largest number of payloads per request. */
export const MAX_PAYLOADS = 100

/** Signs payloads with a wallet account's key (`signWith` = its address). */
export const signRawPayloads = defineActivity('sign_raw_payloads', {
  parse: (r) => ({
    signWith: r.string('signWith', { max: 200 }),
    payloads: r.array('payloads', stringItem, { min: 1, max: MAX_PAYLOADS }),
    encoding: r.enum('encoding', PAYLOAD_ENCODINGS),
    hashFunction: r.enum('hashFunction', HASH_FUNCTIONS),
  }),
  run: (ctx, p) => {
    const account = findAccount(ctx.tx, ctx.organization.id, p.signWith, 'parameters.signWith')
    const signatures = withAccountKey(ctx.service, account, (privateKey) =>
      p.payloads.map((payload, index) => {
        try {
          return signRawPayload({
            curve: account.curve,
            privateKey,
            payload,
            encoding: p.encoding,
            hashFunction: p.hashFunction,
          })
        } catch (error) {
          // Point at the payload for payload problems, at the setting otherwise.
          if (error instanceof CryptoInputError)
            throw new ApiError(
              'FIELD_INVALID',
              `payload ${index}: ${error.message}`,
              error.field === 'payloads' || error.field === undefined
                ? `parameters.payloads[${index}]`
                : `parameters.${error.field === 'curve' ? 'signWith' : error.field}`,
            )
          throw error
        }
      }),
    )
    return { signatures }
  },
})
