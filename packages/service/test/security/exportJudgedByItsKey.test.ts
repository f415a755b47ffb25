// A DENY naming the treasury account's address holds for export_wallet_account and sign_raw_payload
// of another account of the same key: create_wallet_accounts adds a wallet's `curve|path` again
// under another `addressFormat` (the same private key, another address), and the policies judge
// every account of the wallet holding the key the handler exports or signs with, each in a scope
// of its own (policies/policySignersOf.ts). Before, they judged only the address named, and the
// alias exported the treasury's key past the DENY.
import { hpkeOpen } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../../src/kernel/crypto/index.ts'
import { ETHEREUM_ACCOUNT, resultOf } from '../../src/testing/harness.ts'
import { delegated } from '../policies/delegated.ts'

const SPENDING = { ...ETHEREUM_ACCOUNT, path: "m/44'/60'/0'/0/1" }

async function openExport(bundle: string, signerPublicKey: string, clientPrivateKey: Uint8Array) {
  const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
    bundle,
    hexToBytes(signerPublicKey),
  )
  return hpkeOpen({
    ciphertext: data,
    receiverPublicKey: p256.getPublicKey(clientPrivateKey, false),
    dh: (sender) => p256.getSharedSecret(clientPrivateKey, sender, true).slice(1),
  })
}

const ethAddressOf = (privateKey: Uint8Array) =>
  `0x${bytesToHex(keccak_256(secp256k1.getPublicKey(privateKey, false).slice(1)).slice(12))}`

describe('a DENY on the treasury account, exported through another address of its key', () => {
  it('does not export the treasury key through a same-path alias in another address format', async () => {
    // Account 0 is the treasury, account 1 a spending account the back end may export.
    const { h, sub, asBackend, policy } = await delegated([ETHEREUM_ACCOUNT, SPENDING])
    const treasury = (sub.addresses![0] as string).toLowerCase()
    await policy({
      policyName: 'back end exports accounts and adds accounts',
      effect: 'EFFECT_ALLOW',
      condition:
        "activity.type == 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT' || activity.type == 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS'",
    })
    await policy({
      policyName: 'never the treasury account',
      effect: 'EFFECT_DENY',
      condition: `activity.type == 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT' && wallet_account.address == '${treasury}'`,
    })
    const clientKey = p256.utils.randomSecretKey()
    const targetPublicKey = bytesToHex(p256.getPublicKey(clientKey, false))

    // Control: the treasury account itself is refused by the DENY.
    h.clock.advance(1)
    const direct = await h.submit(
      'export_wallet_account',
      { address: sub.addresses![0], targetPublicKey },
      asBackend,
    )
    expect(direct.status).toBe(403)
    expect(direct.body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')

    // The attack: the treasury's path again, as a compressed public key "address".
    h.clock.advance(1)
    const added = resultOf(
      'create_wallet_accounts',
      await h.submit(
        'create_wallet_accounts',
        {
          walletId: sub.walletId,
          accounts: [{ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' }],
        },
        asBackend,
      ),
    )
    const alias = added.addresses[0] as string
    expect(alias.toLowerCase()).not.toBe(treasury)
    h.clock.advance(1)
    const reply = await h.submit('export_wallet_account', { address: alias, targetPublicKey }, asBackend)
    let exportedTreasuryKey = false
    if (reply.status === 200) {
      const key = await openExport(
        reply.body.activity.result.exportWalletAccountResult.exportBundle,
        h.service.dev.signerPublicKey,
        clientKey,
      )
      exportedTreasuryKey = ethAddressOf(key) === treasury
    }
    // Safe behaviour: the treasury's key never leaves under the DENY, whichever address names it.
    expect({ status: reply.status, exportedTreasuryKey }).toEqual({ status: 403, exportedTreasuryKey: false })
  })

  it('(same cause, signing) does not sign with the treasury key through the alias', async () => {
    const { h, sub, asBackend, policy } = await delegated([ETHEREUM_ACCOUNT, SPENDING])
    const treasury = (sub.addresses![0] as string).toLowerCase()
    await policy({
      policyName: 'back end signs and adds accounts',
      effect: 'EFFECT_ALLOW',
      condition: "activity.action == 'SIGN' || activity.type == 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS'",
    })
    await policy({
      policyName: 'never the treasury account',
      effect: 'EFFECT_DENY',
      condition: `activity.action == 'SIGN' && wallet_account.address == '${treasury}'`,
    })
    const payload = 'ab'.repeat(32)
    const sign = (signWith: string) => {
      h.clock.advance(1)
      return h.submit(
        'sign_raw_payload',
        { signWith, payload, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
        asBackend,
      )
    }
    expect((await sign(sub.addresses![0] as string)).status).toBe(403)
    h.clock.advance(1)
    const alias = resultOf(
      'create_wallet_accounts',
      await h.submit(
        'create_wallet_accounts',
        {
          walletId: sub.walletId,
          accounts: [{ ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' }],
        },
        asBackend,
      ),
    ).addresses[0] as string
    const reply = await sign(alias)
    let signedByTreasury = false
    if (reply.status === 200) {
      const { r, s, v } = reply.body.activity.result.signRawPayloadResult
      const sig = secp256k1.Signature.fromBytes(hexToBytes(r + s), 'compact').addRecoveryBit(
        Number.parseInt(v, 16),
      )
      const pub = sig.recoverPublicKey(hexToBytes(payload)).toBytes(false)
      signedByTreasury = `0x${bytesToHex(keccak_256(pub.slice(1)).slice(12))}` === treasury
    }
    expect({ status: reply.status, signedByTreasury }).toEqual({ status: 403, signedByTreasury: false })
  })
})
