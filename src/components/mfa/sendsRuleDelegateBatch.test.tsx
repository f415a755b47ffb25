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
import { describe, expect, it } from 'vitest'
import {
  BATCH_EXECUTION_TYPES,
  DELEGATE_DOMAIN,
  EXECUTE_BATCH_WITH_OP_DATA_MODE,
} from '../../../packages/service/src/sending/delegate/batchExecution.ts'
import { sendCalls } from '../../core/actions/activities/sendCalls.ts'
import { signRawPayloads } from '../../core/actions/activities/signRawPayloads.ts'
import { signTypedData } from '../../core/actions/activities/signTypedData.ts'
import { permitTypedData } from '../../test/permitTypedData.ts'
import { ETH, FAUCET_KEY, held, sendsRuleOnChain } from '../test/sendsRuleOnChain.ts'

const THIEF = '0x00000000000000000000000000000000000bad01'
const DELEGATE_ABI = parseAbi(['function execute(bytes32 mode, bytes executionData) payable'])
const { chain, balance, setUp } = sendsRuleOnChain()

describe('"sends above an amount need a passkey" and the kit\'s delegate', () => {
  it('holds a BatchExecution moving 0.5 ETH under a 0.1 ETH rule, as typed data or as its EIP-712 digest; other typed data signs at once', async () => {
    // A signed-in user under the 0.1 ETH rule whose account delegates (a batch worth 0 passed).
    const { client, from, passkeyUses } = await setUp()
    const before = passkeyUses()

    // Control: a direct 0.5 ETH send is held.
    await expect(
      sendCalls(client, { from, caip2: 'eip155:31337', calls: [{ to: THIEF, value: String(ETH / 2n) }] }),
    ).rejects.toMatchObject(held)

    // The session signs a BatchExecution paying the thief 0.5 ETH (nonce 1: the batch used 0).
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 3600)
    // The types and domain the delegate hashes (the service's, checked against the contract).
    const { EIP712Domain: domainFields, ...types } = BATCH_EXECUTION_TYPES
    const domain = { ...DELEGATE_DOMAIN, chainId: 31337, verifyingContract: from }
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
        transport: http(chain.node.url),
      })
      await relayer.sendTransaction({
        to: from,
        data: encodeFunctionData({
          abi: DELEGATE_ABI,
          functionName: 'execute',
          args: [EXECUTE_BATCH_WITH_OP_DATA_MODE, executionData],
        }),
      })
      await chain.node.rpc('anvil_mine', [])
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
