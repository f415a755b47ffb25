// "Sends above an amount need a passkey" and the kit's own EIP-7702 delegate
// (contracts/LatchkeyDelegate.sol): the delegate runs the calls of any `BatchExecution(Call[] calls,
// uint256 nonce,uint256 deadline)` the account signs, whoever relays it, so typed data of that
// shape is a send. Any batch or sponsored send of the user's has put the delegate on the account.
import {
  concat,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  hashDomain,
  hashStruct,
  hashTypedData,
  http,
  keccak256,
  parseAbi,
  parseAbiParameters,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { foundry } from 'viem/chains'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { deployDelegate } from '../../../packages/service/src/sending/delegate/index.ts'
import { type EvmNode, startEvmNode } from '../../../scripts/evmNode.mjs'
import { createMfaPolicy } from '../../core/actions/activities/createMfaPolicy.ts'
import { createWallet } from '../../core/actions/activities/createWallet.ts'
import { sendCalls } from '../../core/actions/activities/sendCalls.ts'
import { signRawPayloads } from '../../core/actions/activities/signRawPayloads.ts'
import { signTypedData } from '../../core/actions/activities/signTypedData.ts'
import { addPasskey } from '../../core/actions/auth/addPasskey.ts'
import { completeOtpSignIn } from '../../core/actions/auth/completeOtpSignIn.ts'
import { startOtpSignIn } from '../../core/actions/auth/startOtpSignIn.ts'
import { getCallsStatus } from '../../core/actions/queries/getCallsStatus.ts'
import { createLatchkey } from '../../react/index.ts'
import { permitTypedData } from '../../test/permitTypedData.ts'
import {
  createTestService,
  installSoftAuthenticator,
  latestCode,
  type SoftAuthenticator,
} from '../test/renderWithService.tsx'
import { SENDS_METHODS, SENDS_POLICY, sendsCondition } from './rules.ts'

const FAUCET_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const THIEF = '0x00000000000000000000000000000000000bad01'
const ETH = 10n ** 18n
const BATCH_WITH_OP_DATA = '0x0100000000007821000100000000000000000000000000000000000000000000'
const DELEGATE_ABI = parseAbi(['function execute(bytes32 mode, bytes executionData) payable'])

let node: EvmNode
let delegate: string
let authenticator: SoftAuthenticator | undefined
let close: (() => Promise<void>) | undefined
beforeAll(async () => {
  node = await startEvmNode()
  delegate = await deployDelegate(node.url, FAUCET_KEY)
})
afterEach(async () => {
  authenticator?.uninstall()
  authenticator = undefined
  await close?.()
  close = undefined
})
afterAll(() => node?.close())

const balance = async (address: string) =>
  BigInt((await node.rpc('eth_getBalance', [address, 'latest'])) as string)

describe('"sends above an amount need a passkey" and the kit\'s delegate', () => {
  it('holds a BatchExecution moving 0.5 ETH under a 0.1 ETH rule, as typed data or as its EIP-712 digest; other typed data signs at once', async () => {
    authenticator = installSoftAuthenticator()
    const { service, config } = await createTestService({
      rpc: { 'eip155:31337': node.url },
      sponsorship: { delegates: { 'eip155:31337': delegate } },
    } as never)
    close = () => service.close()
    const client = createLatchkey({ ...config, polling: { intervalMs: 20, timeoutMs: 10_000 } })
    const started = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact: 'ana@example.com' })
    await completeOtpSignIn(client, {
      ...started,
      otpCode: await latestCode(service, 'ana@example.com'),
      userName: 'Ana',
    })
    await addPasskey(client, { authenticatorName: 'Laptop' })
    const { addresses } = await createWallet(client, { walletName: 'Main', chains: ['ethereum'] })
    const from = addresses[0] as `0x${string}`
    await node.rpc('anvil_setBalance', [from, `0x${ETH.toString(16)}`])
    await createMfaPolicy(client, {
      mfaPolicyName: SENDS_POLICY,
      condition: sendsCondition(ETH / 10n),
      requiredAuthenticationMethods: SENDS_METHODS,
      order: 0,
    })
    const passkeyUses = () => authenticator!.credentials[0]!.counter
    const before = passkeyUses()
    const held = { code: 'MFA_REQUIRED', methods: ['AUTHENTICATION_TYPE_PASSKEY'] }

    // Control: a direct 0.5 ETH send is held.
    await expect(
      sendCalls(client, { from, caip2: 'eip155:31337', calls: [{ to: THIEF, value: String(ETH / 2n) }] }),
    ).rejects.toMatchObject(held)

    // A batch worth 0 passes, and puts the delegate on the account.
    const { sendTransactionStatusId } = await sendCalls(client, {
      from,
      caip2: 'eip155:31337',
      calls: [
        { to: THIEF, value: '0' },
        { to: THIEF, value: '0' },
      ],
    })
    const until = Date.now() + 15_000
    let status = await getCallsStatus(client, { sendTransactionStatusId })
    while (status.status === 'pending' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50))
      status = await getCallsStatus(client, { sendTransactionStatusId })
    }
    expect(status.status).toBe('success')
    const code = (await node.rpc('eth_getCode', [from, 'latest'])) as string
    expect(code.toLowerCase()).toBe(`0xef0100${delegate.slice(2).toLowerCase()}`)

    // The session signs a BatchExecution paying the thief 0.5 ETH (nonce 1: the batch used 0).
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600)
    const types = {
      BatchExecution: [
        { name: 'calls', type: 'Call[]' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
      Call: [
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'data', type: 'bytes' },
      ],
    } as const
    const domainFields = [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ] as const
    const domain = { name: 'LatchkeyDelegate', version: '1', chainId: 31337, verifyingContract: from }
    const message = {
      calls: [{ to: THIEF, value: (ETH / 2n).toString(), data: '0x' }],
      nonce: '1',
      deadline: deadline.toString(),
    }
    const typedData = {
      types: {
        EIP712Domain: [...domainFields],
        BatchExecution: [...types.BatchExecution],
        Call: [...types.Call],
      },
      primaryType: 'BatchExecution',
      domain,
      message,
    }
    let signature: `0x${string}` | undefined
    let refusal: unknown
    try {
      ;({ signature } = (await signTypedData(client, { signWith: from, typedData })) as {
        signature: `0x${string}`
      })
    } catch (error) {
      refusal = error
    }
    // Were it signed, anyone could relay it (here anvil's first account pays the gas).
    if (signature) {
      const opData = encodeAbiParameters(parseAbiParameters('uint256, uint256, bytes'), [
        1n,
        deadline,
        signature,
      ])
      const executionData = encodeAbiParameters(
        parseAbiParameters('(address target, uint256 value, bytes callData)[], bytes'),
        [[{ target: THIEF, value: ETH / 2n, callData: '0x' }], opData],
      )
      const relayer = createWalletClient({
        account: privateKeyToAccount(FAUCET_KEY),
        chain: foundry,
        transport: http(node.url),
      })
      await relayer.sendTransaction({
        to: from,
        data: encodeFunctionData({
          abi: DELEGATE_ABI,
          functionName: 'execute',
          args: [BATCH_WITH_OP_DATA, executionData],
        }),
      })
      await node.rpc('anvil_mine', [])
    }
    expect({
      stolen: await balance(THIEF),
      passkeyUsed: passkeyUses() > before,
      refusal: (refusal as { code?: string })?.code,
    }).toEqual({ stolen: 0n, passkeyUsed: false, refusal: 'MFA_REQUIRED' })

    // The same typed data signed raw, under either hash function the service takes for EIP-712,
    // and its digest signed as keccak256 of 0x1901 ‖ domain separator ‖ struct hash (EIP-191
    // bytes, but not a message): each is the signature the delegate runs, each is held.
    for (const hashFunction of ['HASH_FUNCTION_KECCAK256', 'HASH_FUNCTION_NOT_APPLICABLE'] as const)
      await expect(
        signRawPayloads(client, {
          signWith: from,
          payloads: [JSON.stringify(typedData)],
          encoding: 'PAYLOAD_ENCODING_EIP712',
          hashFunction,
        }),
      ).rejects.toMatchObject(held)
    const digestBytes = concat([
      '0x1901',
      hashDomain({ domain: { ...domain, chainId: 31337n }, types: { EIP712Domain: domainFields } }),
      hashStruct({
        data: { ...message, calls: [{ to: THIEF, value: ETH / 2n, data: '0x' }], nonce: 1n, deadline },
        primaryType: 'BatchExecution',
        types,
      }),
    ])
    expect(keccak256(digestBytes)).toBe(
      hashTypedData({
        domain,
        types,
        primaryType: 'BatchExecution',
        message: { ...message, nonce: 1n, deadline, calls: [{ to: THIEF, value: ETH / 2n, data: '0x' }] },
      }),
    )
    for (const payload of [digestBytes, digestBytes.slice(2)])
      await expect(
        signRawPayloads(client, {
          signWith: from,
          payloads: [payload],
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_KECCAK256',
        }),
      ).rejects.toMatchObject(held)
    expect(await balance(THIEF)).toBe(0n)

    // Typed data the delegate does not run signs at once: a token permit (a spending limit, not
    // this rule, guards tokens).
    await expect(
      signTypedData(client, { signWith: from, typedData: permitTypedData(31337) }),
    ).resolves.toBeTruthy()
    expect(passkeyUses()).toBe(before)
  })
})
