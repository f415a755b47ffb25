import { hexToBytes } from '@noble/hashes/utils.js'
import { z } from 'zod'

export const masterKeySection = z
  .strictObject({
    key: z
      .string({ error: 'must be 64 hex characters (a string)' })
      .regex(/^[0-9a-fA-F]{64}$/, { error: 'must be 64 hex characters (32 bytes)' })
      .optional()
      .meta({ secret: true, env: 'LATCHKEY_MASTER_KEY' })
      .describe(
        'The 32-byte key (64 hex characters) that seals keys and secrets at rest; the same on every instance. `start` never creates one: make it once with `openssl rand -hex 32`.',
      ),
    next_key: z
      .string({ error: 'must be 64 hex characters (a string)' })
      .regex(/^[0-9a-fA-F]{64}$/, { error: 'must be 64 hex characters (32 bytes)' })
      .optional()
      .meta({ secret: true, env: 'LATCHKEY_NEXT_MASTER_KEY' })
      .describe(
        'During a master-key rotation only: the new key, held beside `key` by every instance until `latchkey-service rotate-master-key` has re-sealed everything; then it becomes `key` and this is removed.',
      ),
  })
  .describe('The master key. Give it as `key_file` (a file holding the hex) or the env var, not inline.')

export type MasterKeySection = z.infer<typeof masterKeySection>

/** The keys to hand `createService`: the key in use, then the rotation's new key when one is given. */
export function masterKeysOptions(parsed: MasterKeySection): Uint8Array[] {
  const keys = [parsed.key, parsed.next_key].filter((key): key is string => key !== undefined)
  return keys.map((key) => hexToBytes(key.toLowerCase()))
}
