import { HASH_FUNCTIONS, PAYLOAD_ENCODINGS } from '@latchkey/protocol'
import { defineActivity } from '../kernel/registry.ts'
import { signAs, signerLookups, startSigning } from './signRawPayloads.ts'

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
  lookups: signerLookups,
  precompute: (ctx, p) => startSigning(ctx, p.signWith, { ...p, payloads: [p.payload] }),
  run: async (ctx, p) => {
    const [signature] = await signAs(ctx, p.signWith, { ...p, payloads: [p.payload] }, () => ({
      field: 'parameters.payload',
      prefix: '',
    }))
    return signature!
  },
})
