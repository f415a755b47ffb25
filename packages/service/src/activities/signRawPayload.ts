import { HASH_FUNCTIONS, PAYLOAD_ENCODINGS } from '@latchkey/protocol'
import { findSigner, withAccountKey } from '../domain/wallets.ts'
import { defineActivity } from '../registry.ts'
import { signPayloadAs } from './signRawPayloads.ts'

/**
 * Signs one payload with a wallet account's key (`signWith` = its address): the published
 * clients' `signMessage` (`ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2`). Same signing as `sign_raw_payloads`.
 */
export const signRawPayload = defineActivity('sign_raw_payload', {
  parse: (r) => ({
    signWith: r.string('signWith', { max: 200 }),
    payload: r.string('payload', { max: 1_000_000 }),
    encoding: r.enum('encoding', PAYLOAD_ENCODINGS),
    hashFunction: r.enum('hashFunction', HASH_FUNCTIONS),
  }),
  run: async (ctx, p) => {
    const account = await findSigner(ctx.tx, ctx.organization.id, p.signWith, 'parameters.signWith')
    return withAccountKey(ctx.service, account, (privateKey) =>
      signPayloadAs(account, privateKey, p, 'parameters.payload'),
    )
  },
})
