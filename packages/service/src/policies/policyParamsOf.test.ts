import { type ActivityPath, SOLANA_CAIP2_ALIASES } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { Reader } from '../kernel/Reader.ts'
import { parseSolSend } from '../sending/solSend.ts'
import { createHarness } from '../testing/harness.ts'
import { policyParamsOf, UNREAD_PARAMETERS } from './policyParamsOf.ts'

describe('UNREAD_PARAMETERS', () => {
  it("is every registered handler's bearer, secret and sealed-bundle parameters, and no other", async () => {
    const h = await createHarness()
    const declared: Record<string, string[]> = {}
    for (const [path, handler] of h.service.registry.activities) {
      const fields = [
        ...(handler.bearerParameters ?? []),
        ...(handler.secretParameters ?? []),
        ...(handler.clearedWhenDone ?? []),
      ]
      if (fields.length > 0) declared[path] = [...new Set(fields)].sort()
    }
    await h.service.close()
    expect(
      Object.fromEntries(
        Object.entries(UNREAD_PARAMETERS).map(([path, fields]) => [path, [...fields!].sort()]),
      ),
    ).toEqual(declared)
  })
})

describe('policyParamsOf', () => {
  it('leaves the unread parameters out, through lists, and keeps the rest', () => {
    expect(
      policyParamsOf('latchkey_import_user', {
        userName: 'u',
        wallets: [{ walletName: 'w', encryptedBundle: 'secret' }, { walletName: 'v' }],
        privateKeys: [],
      }),
    ).toEqual({ userName: 'u', wallets: [{ walletName: 'w' }, { walletName: 'v' }], privateKeys: [] })
    expect(
      policyParamsOf('create_sub_organization', {
        verificationToken: 't',
        clientSignature: { signature: 's' },
        rootUsers: [{ userName: 'r', oauthProviders: [{ providerName: 'g', oidcToken: 'jwt' }] }],
      }),
    ).toEqual({ rootUsers: [{ userName: 'r', oauthProviders: [{ providerName: 'g' }] }] })
    // A path of no activity's reads the intent whole.
    const intent = { verificationToken: 't' }
    expect(policyParamsOf('create_policy', intent)).toBe(intent)
  })

  it('reads a Solana chain alias as the CAIP-2 id parseSolSend sends on', () => {
    const send = (caip2: string) =>
      parseSolSend(new Reader({ unsignedTransaction: '00', signWith: 'a', caip2 }, 'parameters')).caip2
    for (const [alias, canonical] of Object.entries(SOLANA_CAIP2_ALIASES)) {
      expect(send(alias)).toBe(canonical)
      expect(send(canonical)).toBe(canonical)
      expect(policyParamsOf('sol_send_transaction', { caip2: alias }).caip2).toBe(canonical)
    }
    // Only the Solana send's: another activity's parameter is read as sent.
    expect(policyParamsOf('create_policy' as ActivityPath, { caip2: 'solana:mainnet' }).caip2).toBe(
      'solana:mainnet',
    )
  })
})
