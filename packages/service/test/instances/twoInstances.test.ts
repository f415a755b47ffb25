// Two service processes on one PostgreSQL. Black box: the CLI as child processes, HTTP on
// 127.0.0.1. What must hold across them lives in the database, so neither process's memory decides.

import { secp256k1 } from '@noble/curves/secp256k1.js'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { ETHEREUM_ACCOUNT } from '../../src/testing/testKeys.ts'
import { errorOf, type Reply, resultOf } from '../support/RootClient.ts'
import {
  codeOf,
  freshEmail,
  type Instance,
  otpSignup,
  proxy,
  useTwoInstances,
  verifiedToken,
} from './instances.ts'

const two = useTwoInstances()

describe('two instances on one PostgreSQL', { timeout: 60_000 }, () => {
  it('both instances started together on the empty database print the same dev organization', () => {
    const [first, second] = two.both.map((instance) => instance.info)
    expect(first!.baseUrl).not.toBe(second!.baseUrl)
    for (const field of ['organizationId', 'authProxyConfigId', 'apiPublicKey', 'apiPrivateKey'] as const)
      expect({ field, value: second![field] }).toEqual({ field, value: first![field] })
  })

  it('30 concurrent sign-ups with one verification token, over both instances, create exactly one account', async () => {
    const email = freshEmail('race')
    const proof = await verifiedToken(two.a, two.b, two.both, email)
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => otpSignup(two.both[i % 2]!, email, proof)),
    )
    const statuses = replies.map((reply) => reply.status)
    expect(replies.filter((reply) => reply.status >= 500).map((reply) => [reply.status, reply.body])).toEqual(
      [],
    )
    expect(statuses.filter((status) => status === 200)).toHaveLength(1)
    for (const reply of replies.filter((r) => r.status !== 200))
      expect(reply.status).toBeGreaterThanOrEqual(400)
    // One sub-organization with that e-mail, seen the same from either instance.
    const [fromA, fromB] = await Promise.all(
      two.both.map((instance) => two.root.accountsWithEmail(instance, email)),
    )
    expect(fromA).toHaveLength(1)
    expect(fromB).toEqual(fromA)
    const winner = replies.find((reply) => reply.status === 200)!
    expect(fromA).toEqual([winner.body.organizationId])
  })

  it('one stamped create_wallet sent 20 times at once over both instances is one activity and one wallet', async () => {
    // The transaction does not read the fingerprint index on PostgreSQL (that would make every
    // two concurrent activities conflict); the unique index decides, and the loser's rerun answers
    // with the winner's activity.
    const walletName = `replayed ${Date.now()}`
    const prepared = two.root.prepareActivity('create_wallet', {
      walletName,
      accounts: [ETHEREUM_ACCOUNT],
    })
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => two.root.send(two.both[i % 2]!, prepared)),
    )
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200))
    const ids = new Set(replies.map((reply) => reply.body.activity.id))
    const addresses = new Set(replies.map((reply) => resultOf('create_wallet', reply).addresses[0]))
    expect({ activities: ids.size, addresses: addresses.size }).toEqual({ activities: 1, addresses: 1 })
    for (const instance of two.both) {
      const listed = await two.root.query(instance, 'list_wallets')
      expect(listed.status).toBe(200)
      expect(
        listed.body.wallets.filter((w: { walletName: string }) => w.walletName === walletName),
      ).toHaveLength(1)
    }
  })

  /**
   * Wrong guesses at one code, sent to `order(i)` for the i-th guess, until the service refuses to
   * take another: answers the number of guesses it judged (OTP_INVALID) and the refusal of the
   * right code afterwards.
   */
  async function guessUntilRefused(order: (i: number) => Instance, email: string) {
    const init = await proxy(two.a, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    expect(init.status).toBe(200)
    const otpId = init.body.otpId as string
    const code = await codeOf(two.both, email, otpId)
    const wrong = code === '000000' ? '000001' : '000000'
    let judged = 0
    let refusal: Reply | undefined
    for (let i = 0; i < 30 && !refusal; i++) {
      const reply = await proxy(order(i), 'otp_verify', { otpId, otpCode: wrong })
      expect(reply.status).toBeLessThan(500)
      if (errorOf(reply).errorCode === 'OTP_INVALID') judged++
      else refusal = reply
    }
    expect(refusal, 'the service kept judging wrong codes').toBeDefined()
    const right = await proxy(order(judged + 1), 'otp_verify', { otpId, otpCode: code })
    return { judged, refusal: errorOf(refusal!), right: errorOf(right) }
  }

  it('the wrong-code budget of one code holds across instances: alternating gains no guess, the right code is refused after', async () => {
    const single = await guessUntilRefused(() => two.a, freshEmail('budget-one'))
    const alternating = await guessUntilRefused((i) => two.both[i % 2]!, freshEmail('budget-two'))
    // With the budget in each process's memory, alternating would get twice the guesses.
    expect(single.judged).toBeGreaterThan(0)
    expect(single.judged).toBeLessThanOrEqual(10)
    expect(alternating.judged).toBe(single.judged)
    expect(alternating.refusal).toEqual(single.refusal)
    expect(single.refusal.status).toBeGreaterThanOrEqual(400)
    for (const right of [single.right, alternating.right]) {
      expect(right.status).toBeGreaterThanOrEqual(400)
      expect(right.status).toBeLessThan(500)
      expect(['OTP_ATTEMPTS_EXCEEDED', 'OTP_RATE_LIMITED']).toContain(right.errorCode)
    }
  })

  it('concurrent wrong guesses on both instances are all counted: none slips past the budget, the right code is refused', async () => {
    const budget = (await guessUntilRefused(() => two.b, freshEmail('budget-base'))).judged
    const email = freshEmail('budget-race')
    const init = await proxy(two.b, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: email })
    expect(init.status).toBe(200)
    const otpId = init.body.otpId as string
    const code = await codeOf(two.both, email, otpId)
    const wrong = code === '000000' ? '000001' : '000000'
    const replies = await Promise.all(
      Array.from({ length: 4 * budget }, (_, i) =>
        proxy(two.both[i % 2]!, 'otp_verify', { otpId, otpCode: wrong }),
      ),
    )
    expect(replies.filter((reply) => reply.status >= 500).map((reply) => [reply.status, reply.body])).toEqual(
      [],
    )
    // Each guess the service judged was charged: no more than the budget were judged.
    const judged = replies.filter((reply) => errorOf(reply).errorCode === 'OTP_INVALID').length
    expect(judged).toBeLessThanOrEqual(budget)
    for (const instance of two.both) {
      const right = errorOf(await proxy(instance, 'otp_verify', { otpId, otpCode: code }))
      expect(['OTP_ATTEMPTS_EXCEEDED', 'OTP_RATE_LIMITED']).toContain(right.errorCode)
    }
  })

  it('a wallet created through instance A signs through instance B, and the signature recovers its address', async () => {
    const created = resultOf(
      'create_wallet',
      await two.root.submit(two.a, 'create_wallet', {
        walletName: `cross ${Date.now()}`,
        accounts: [ETHEREUM_ACCOUNT],
      }),
    )
    const address = created.addresses[0] as string
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    const digest = keccak_256(utf8ToBytes(`signed through B ${Date.now()}`))
    const signed = resultOf(
      'sign_raw_payload',
      await two.root.submit(two.b, 'sign_raw_payload', {
        signWith: address,
        payload: bytesToHex(digest),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    )
    const signature = secp256k1.Signature.fromBytes(
      hexToBytes(signed.r + signed.s),
      'compact',
    ).addRecoveryBit(Number.parseInt(signed.v, 16))
    const publicKey = signature.recoverPublicKey(digest).toBytes(false)
    expect(secp256k1.verify(signature.toBytes('compact'), digest, publicKey, { prehash: false })).toBe(true)
    const recovered = `0x${bytesToHex(keccak_256(publicKey.slice(1)).slice(12))}`
    expect(recovered).toBe(address.toLowerCase())
    // B lists the wallet A created.
    const listed = await two.root.query(two.b, 'list_wallets')
    expect(listed.status).toBe(200)
    expect(listed.body.wallets.map((w: { walletId: string }) => w.walletId)).toContain(created.walletId)
  })
})
