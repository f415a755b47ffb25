import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { hexToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, resultOf, SOLANA_ACCOUNT } from '../test/harness.ts'

describe('wallet activities', () => {
  it('creates a wallet, derives accounts and signs with them', async () => {
    const h = createHarness()
    const reply = await h.submit('create_wallet', {
      walletName: 'Main',
      accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT],
    })
    expect(reply.status).toBe(200)
    const activity = reply.body.activity
    expect(activity).toMatchObject({
      organizationId: h.organizationId,
      status: 'ACTIVITY_STATUS_COMPLETED',
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      intent: { createWalletIntent: { walletName: 'Main', accounts: [ETHEREUM_ACCOUNT, SOLANA_ACCOUNT] } },
      votes: [],
      canApprove: false,
      canReject: false,
    })
    const { walletId, addresses } = activity.result.createWalletResult
    expect(addresses).toHaveLength(2)
    expect(addresses[0]).toMatch(/^0x[0-9a-fA-F]{40}$/)

    const payload = `0x${'ab'.repeat(32)}`
    const signed = resultOf(
      'sign_raw_payloads',
      await h.submit('sign_raw_payloads', {
        signWith: addresses[0],
        payloads: [payload],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    )
    const [{ r, s, v }] = signed.signatures
    const signature = secp256k1.Signature.fromBytes(hexToBytes(r + s), 'compact').addRecoveryBit(
      Number.parseInt(v, 16),
    )
    const publicKey = signature.recoverPublicKey(hexToBytes(payload.slice(2))).toBytes(false)
    const recovered = `0x${Buffer.from(keccak_256(publicKey.slice(1)).slice(12)).toString('hex')}`
    expect(recovered).toBe(addresses[0].toLowerCase())

    const wallets = await h.query('list_wallets')
    expect(wallets.status).toBe(200)
    expect(wallets.body.wallets).toEqual([
      expect.objectContaining({ walletId, walletName: 'Main', exported: false, imported: false }),
    ])
  })
})
