// The signing key held by ANOTHER wallet of the organization (the same seed imported twice), or by
// a private key imported from the same secret: policies judge "the signer is its key, however it
// is named" (docs/policies.md; policies/policySignersOf.ts), so every wallet account of the
// organization holding the key is judged, in any wallet and any address format, each with its own
// `wallet`. Before, only the accounts of the one wallet `findSigner` found were, and a private key
// none: a DENY on `wallet_account.address == <treasury>` (signing, export, an MFA rule) was
// passed by naming an account of the treasury's key added to another wallet holding the same
// seed (in ADDRESS_FORMAT_COMPRESSED, which the back end adds itself), or that private key.
import { hpkeOpen, hpkeSeal } from '@latchkey/protocol/hpke'
import { p256 } from '@noble/curves/nist.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { Transaction } from 'micro-eth-signer'
import { serializeTransaction } from 'viem'
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { openSignedBundle } from '../../src/kernel/crypto/index.ts'
import { ETHEREUM_ACCOUNT, type Harness, resultOf } from '../../src/testing/harness.ts'
import { backEndSecondFactor, delegated } from '../policies/delegated.ts'

const COMPRESSED = { ...ETHEREUM_ACCOUNT, addressFormat: 'ADDRESS_FORMAT_COMPRESSED' }
const SOLANA_ONLY = {
  curve: 'CURVE_ED25519',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/501'/0'/0'",
  addressFormat: 'ADDRESS_FORMAT_SOLANA',
}

const tx = (nonce: number) =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 1,
    nonce,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    gas: 21000n,
    to: '0x3333333333333333333333333333333333333333',
    value: 10n ** 18n,
  })

const senderOf = (signed: string | undefined) =>
  signed === undefined ? undefined : Transaction.fromHex(signed).sender.toLowerCase()

const targetOf = (h: Harness, importBundle: string) =>
  hexToBytes(
    openSignedBundle<{ targetPublic: string }>(importBundle, hexToBytes(h.service.dev.signerPublicKey))
      .targetPublic,
  )

async function setUp() {
  const t = await delegated([ETHEREUM_ACCOUNT])
  const userId = t.sub.userIds[0]!
  const mnemonic = generateMnemonic(english)
  const importWallet = async (walletName: string, accounts: unknown[]) => {
    t.h.clock.advance(1)
    const init = resultOf('init_import_wallet', await t.h.submit('init_import_wallet', { userId }, t.asRoot))
    t.h.clock.advance(1)
    return resultOf(
      'import_wallet',
      await t.h.submit(
        'import_wallet',
        {
          userId,
          walletName,
          encryptedBundle: JSON.stringify(
            hpkeSeal({
              plaintext: utf8ToBytes(mnemonic),
              receiverPublicKey: targetOf(t.h, init.importBundle),
            }),
          ),
          accounts,
        },
        t.asRoot,
      ),
    ) as { walletId: string; addresses: string[] }
  }
  // The end user's treasury, imported from their seed; and the same seed imported again as an
  // "Ops" wallet whose only account is a Solana one.
  const treasury = await importWallet('Treasury', [ETHEREUM_ACCOUNT])
  const ops = await importWallet('Ops', [SOLANA_ONLY])
  const treasuryAddress = treasury.addresses[0]!.toLowerCase()
  return { t, mnemonic, userId, treasuryAddress, treasury, ops }
}

describe('the treasury key held by another wallet of the organization', () => {
  it('a DENY on wallet_account.address == treasury holds when the key is named through another wallet', async () => {
    const { t, treasuryAddress, ops } = await setUp()
    await t.allowSigning()
    await t.policy({
      policyName: 'back end adds accounts to Ops',
      effect: 'EFFECT_ALLOW',
      condition: `activity.kind == 'create_wallet_accounts' && wallet.id == '${ops.walletId}'`,
    })
    await t.policy({
      policyName: 'back end never signs with the treasury account',
      effect: 'EFFECT_DENY',
      condition: `wallet_account.address == '${treasuryAddress}'`,
    })
    const sign = (signWith: string, nonce: number) => {
      t.h.clock.advance(1)
      return t.h.submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asBackend,
      )
    }
    // Control: named directly, refused.
    expect((await sign(treasuryAddress, 0)).body.details?.outcome).toBe('OUTCOME_DENY_EXPLICIT')
    // The back end adds the treasury's path, in the compressed format, to Ops (its own grant).
    t.h.clock.advance(1)
    const added = resultOf(
      'create_wallet_accounts',
      await t.h.submit(
        'create_wallet_accounts',
        { walletId: ops.walletId, accounts: [COMPRESSED] },
        t.asBackend,
      ),
    ) as { addresses: string[] }
    const attack = await sign(added.addresses[0]!, 1)
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({ status: attack.status, signedAsTreasury: senderOf(signed) === treasuryAddress }).toEqual({
      status: 403,
      signedAsTreasury: false,
    })
    await t.h.service.close()
  })

  it('a DENY on the treasury wallet holds when its key is named through another wallet', async () => {
    const { t, treasuryAddress, treasury, ops } = await setUp()
    await t.allowSigning()
    await t.policy({
      policyName: 'back end adds accounts to Ops',
      effect: 'EFFECT_ALLOW',
      condition: `activity.kind == 'create_wallet_accounts' && wallet.id == '${ops.walletId}'`,
    })
    await t.policy({
      policyName: 'back end never signs with the treasury wallet',
      effect: 'EFFECT_DENY',
      condition: `wallet.id == '${treasury.walletId}'`,
    })
    t.h.clock.advance(1)
    // The treasury's own account, in the same format, in Ops: the same address in two wallets.
    const added = resultOf(
      'create_wallet_accounts',
      await t.h.submit(
        'create_wallet_accounts',
        { walletId: ops.walletId, accounts: [ETHEREUM_ACCOUNT, COMPRESSED] },
        t.asBackend,
      ),
    ) as { addresses: string[] }
    expect(added.addresses[0]!.toLowerCase()).toBe(treasuryAddress)
    for (const [nonce, signWith] of added.addresses.entries()) {
      t.h.clock.advance(1)
      const attack = await t.h.submit(
        'sign_transaction',
        { signWith, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(nonce) },
        t.asBackend,
      )
      expect({ signWith, status: attack.status }).toEqual({ signWith, status: 403 })
    }
    await t.h.service.close()
  })

  it('a DENY on wallet_account.address == treasury holds for a private key imported from the same secret', async () => {
    const { t, mnemonic, userId, treasuryAddress } = await setUp()
    await t.allowSigning()
    await t.policy({
      policyName: 'back end never signs with the treasury account',
      effect: 'EFFECT_DENY',
      condition: `wallet_account.address == '${treasuryAddress}'`,
    })
    const secret = mnemonicToAccount(mnemonic).getHdKey().privateKey!
    t.h.clock.advance(1)
    const init = resultOf(
      'init_import_private_key',
      await t.h.submit('init_import_private_key', { userId }, t.asRoot),
    )
    t.h.clock.advance(1)
    const imported = resultOf(
      'import_private_key',
      await t.h.submit(
        'import_private_key',
        {
          userId,
          privateKeyName: 'hot',
          curve: 'CURVE_SECP256K1',
          addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          encryptedBundle: JSON.stringify(
            hpkeSeal({ plaintext: secret, receiverPublicKey: targetOf(t.h, init.importBundle) }),
          ),
        },
        t.asRoot,
      ),
    ) as { privateKeyId: string; addresses: { address: string }[] }
    expect(imported.addresses[0]!.address.toLowerCase()).toBe(treasuryAddress)
    t.h.clock.advance(1)
    const attack = await t.h.submit(
      'sign_transaction',
      { signWith: imported.privateKeyId, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx(0) },
      t.asBackend,
    )
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({ status: attack.status, signedAsTreasury: senderOf(signed) === treasuryAddress }).toEqual({
      status: 403,
      signedAsTreasury: false,
    })
    await t.h.service.close()
  })

  it('export_wallet_account of the key through another wallet is refused by a DENY on the treasury account', async () => {
    const { t, treasuryAddress, ops } = await setUp()
    await t.policy({
      policyName: 'back end exports and adds accounts of Ops',
      effect: 'EFFECT_ALLOW',
      condition: `wallet.id == '${ops.walletId}' && (activity.kind == 'export_wallet_account' || activity.kind == 'create_wallet_accounts')`,
    })
    await t.policy({
      policyName: 'never the treasury account',
      effect: 'EFFECT_DENY',
      condition: `activity.kind == 'export_wallet_account' && wallet_account.address == '${treasuryAddress}'`,
    })
    t.h.clock.advance(1)
    const added = resultOf(
      'create_wallet_accounts',
      await t.h.submit(
        'create_wallet_accounts',
        { walletId: ops.walletId, accounts: [COMPRESSED] },
        t.asBackend,
      ),
    ) as { addresses: string[] }
    const clientKey = p256.utils.randomSecretKey()
    const targetPublicKey = bytesToHex(p256.getPublicKey(clientKey, false))
    t.h.clock.advance(1)
    const attack = await t.h.submit(
      'export_wallet_account',
      { address: added.addresses[0], targetPublicKey },
      t.asBackend,
    )
    let exportedTreasuryKey = false
    const bundle = attack.body.activity?.result?.exportWalletAccountResult?.exportBundle as string | undefined
    if (bundle) {
      const data = openSignedBundle<{ encappedPublic: string; ciphertext: string }>(
        bundle,
        hexToBytes(t.h.service.dev.signerPublicKey),
      )
      const opened = await hpkeOpen({
        ciphertext: data,
        receiverPublicKey: p256.getPublicKey(clientKey, false),
        dh: (sender) => p256.getSharedSecret(clientKey, sender, true).slice(1),
      })
      const text = new TextDecoder().decode(opened)
      const hex = /^(0x)?[0-9a-f]{64}$/i.test(text) ? text.replace(/^0x/, '') : bytesToHex(opened)
      const { privateKeyToAccount } = await import('viem/accounts')
      exportedTreasuryKey = privateKeyToAccount(`0x${hex}`).address.toLowerCase() === treasuryAddress
    }
    expect({ status: attack.status, exportedTreasuryKey }).toEqual({
      status: 403,
      exportedTreasuryKey: false,
    })
    await t.h.service.close()
  })

  it('an MFA condition on wallet_account.address == treasury holds when the key is named through another wallet', async () => {
    const { t, treasuryAddress, ops } = await setUp()
    await t.policy({
      policyName: 'back end',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET'",
    })
    const { asBackend } = await backEndSecondFactor(t.h, t, [
      {
        name: 'the treasury needs a second factor',
        condition: `activity.kind == 'sign_transaction' && wallet_account.address == '${treasuryAddress}'`,
      },
    ])
    const control = await asBackend('sign_transaction', {
      signWith: treasuryAddress,
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: tx(0),
    })
    expect(control.body.activity?.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED')
    const added = resultOf(
      'create_wallet_accounts',
      await asBackend('create_wallet_accounts', { walletId: ops.walletId, accounts: [COMPRESSED] }),
    ) as { addresses: string[] }
    const attack = await asBackend('sign_transaction', {
      signWith: added.addresses[0],
      type: 'TRANSACTION_TYPE_ETHEREUM',
      unsignedTransaction: tx(1),
    })
    const signed = attack.body.activity?.result?.signTransactionResult?.signedTransaction as
      | string
      | undefined
    expect({
      status: attack.body.activity?.status,
      signedAsTreasury: senderOf(signed) === treasuryAddress,
    }).toEqual({ status: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED', signedAsTreasury: false })
    await t.h.service.close()
  })
})
