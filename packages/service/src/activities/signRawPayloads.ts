import {
  HASH_FUNCTIONS,
  type HashFunction,
  PAYLOAD_ENCODINGS,
  type PayloadEncoding,
} from '@latchkey/protocol'
import { CryptoInputError, signRawPayload } from '../crypto/index.ts'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { ApiError } from '../errors.ts'
import { stringItem } from '../pipeline/Reader.ts'
import { defineActivity } from '../registry.ts'
import type { WalletAccountRow } from '../store/model.ts'

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
  run: async (ctx, p) => {
    const account = await findSigner(ctx.tx, ctx.organization.id, p.signWith, 'parameters.signWith')
    const signatures = withAccountKey(ctx.service, account, (privateKey) =>
      p.payloads.map((payload, index) =>
        signPayloadAs(
          account,
          privateKey,
          { ...p, payload },
          `parameters.payloads[${index}]`,
          `payload ${index}: `,
        ),
      ),
    )
    return { signatures }
  },
})

/**
 * One payload signed with an account's key (sign_raw_payloads and sign_raw_payload): a payload
 * problem names `payloadField`, a setting problem its parameter.
 */
export function signPayloadAs(
  account: WalletAccountRow,
  privateKey: Uint8Array,
  p: { payload: string; encoding: PayloadEncoding; hashFunction: HashFunction },
  payloadField: string,
  prefix = '',
) {
  try {
    return signRawPayload({
      curve: account.curve,
      privateKey,
      payload: p.payload,
      encoding: p.encoding,
      hashFunction: p.hashFunction,
    })
  } catch (error) {
    if (error instanceof CryptoInputError)
      throw new ApiError(
        'FIELD_INVALID',
        `${prefix}${error.message}`,
        error.field === 'payloads' || error.field === 'payload' || error.field === undefined
          ? payloadField
          : `parameters.${error.field === 'curve' ? 'signWith' : error.field}`,
      )
    throw error
  }
}
