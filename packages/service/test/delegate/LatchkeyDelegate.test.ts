import { readFileSync } from 'node:fs'
import { recoverAddressTyped, signTyped } from 'micro-eth-signer'
import {
  type Abi,
  type BaseError,
  type Chain,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  hashTypedData,
  http,
  keccak256,
  type PublicClient,
  toHex,
} from 'viem'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { anvil } from 'viem/chains'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EvmNode, startEvmNode } from '../../../../scripts/evmNode.mjs'
import {
  BATCH_EXECUTION_TYPES,
  batchExecutionDigest,
  batchExecutionTypedData,
  DELEGATE_ADDRESS,
  type DelegateCall,
  delegateContract,
  deployDelegate,
  EXECUTE_BATCH_WITH_OP_DATA_MODE,
  encodeExecuteBatch,
  httpEthRpc,
  readDelegateNonce,
  readDelegation,
} from '../../src/sending/delegate/index.ts'

// The standard development mnemonic's first two accounts, funded by anvil.
const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
const SPONSOR_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'

interface Artifact {
  abi: Abi
  bytecode: Hex
}
const artifact = (file: string): Artifact =>
  JSON.parse(readFileSync(new URL(`../../../../contracts/${file}`, import.meta.url), 'utf8'))
const tokenArtifact = artifact('test/TestToken.json')
const reentererArtifact = artifact('test/Reenterer.json')
const delegateAbi = delegateContract.abi as unknown as Abi
// Reverts bubble up from the calls, so errors of every contract involved are decoded.
const errorsAbi = [...delegateAbi, ...tokenArtifact.abi].filter((item) => item.type === 'error')

let node: EvmNode
let chain: Chain
let client: PublicClient
const sponsor = privateKeyToAccount(SPONSOR_KEY)
let sponsorWallet: ReturnType<typeof createWalletClient>
let token: Hex
let reenterer: Hex
const recipient = privateKeyToAccount(generatePrivateKey()).address

beforeAll(async () => {
  node = await startEvmNode()
  chain = { ...anvil, rpcUrls: { default: { http: [node.url] } } }
  client = createPublicClient({ chain, transport: http(node.url), pollingInterval: 50 })
  sponsorWallet = createWalletClient({
    account: sponsor,
    chain,
    transport: http(node.url),
    pollingInterval: 50,
  })
  expect(await deployDelegate(node.url, DEPLOYER_KEY)).toBe(DELEGATE_ADDRESS)
  token = await deploy(tokenArtifact)
  reenterer = await deploy(reentererArtifact)
}, 60_000)

afterAll(async () => {
  await node?.close()
})

async function deploy({ abi, bytecode }: Artifact): Promise<Hex> {
  const hash = await sponsorWallet.deployContract({ abi, bytecode, account: sponsor, chain })
  const receipt = await client.waitForTransactionReceipt({ hash })
  return getAddress(receipt.contractAddress as Hex)
}

async function now(): Promise<bigint> {
  return (await client.getBlock()).timestamp
}

const erc20 = (functionName: 'transfer' | 'approve' | 'mint', args: readonly unknown[]) =>
  encodeFunctionData({ abi: tokenArtifact.abi, functionName, args })

async function balanceOf(owner: Hex): Promise<bigint> {
  return (await client.readContract({
    address: token,
    abi: tokenArtifact.abi,
    functionName: 'balanceOf',
    args: [owner],
  })) as bigint
}

/** A fresh account with no ETH, holding `tokens` of the test token. */
async function freshUser(tokens = 1000n): Promise<PrivateKeyAccount> {
  const user = privateKeyToAccount(generatePrivateKey())
  const hash = await sponsorWallet.sendTransaction({
    account: sponsor,
    chain,
    to: token,
    data: erc20('mint', [user.address, tokens]),
  })
  await client.waitForTransactionReceipt({ hash })
  return user
}

interface Batch {
  calls: DelegateCall[]
  nonce: bigint
  deadline: bigint
}

/** The account's signature over the batch (the digest, signed as a raw hash). */
async function signBatch(
  signer: PrivateKeyAccount,
  account: Hex,
  batch: Batch,
  chainId = 31337n,
): Promise<Hex> {
  const digest = batchExecutionDigest({ chainId, account, ...batch })
  return signer.sign({ hash: toHex(digest) })
}

/** The sponsor's calldata for a batch the user signed. */
async function signedExecute(user: PrivateKeyAccount, batch: Batch): Promise<Hex> {
  return encodeExecuteBatch({ ...batch, signature: await signBatch(user, user.address, batch) }) as Hex
}

/** The authorization list that delegates `user` to the delegate, at its current account nonce. */
async function delegation(user: PrivateKeyAccount) {
  const nonce = await client.getTransactionCount({ address: user.address })
  return [await user.signAuthorization({ chainId: 31337, address: DELEGATE_ADDRESS as Hex, nonce })]
}

/** The sponsor's type-4 (with `authorize`) or type-2 transaction to the user's account; its receipt. */
async function sponsorSends(user: PrivateKeyAccount, data: Hex, authorize: boolean, gas?: bigint) {
  const hash = await sponsorWallet.sendTransaction({
    account: sponsor,
    chain,
    to: user.address,
    data,
    ...(authorize ? { authorizationList: await delegation(user) } : {}),
    ...(gas ? { gas } : {}),
  })
  return client.waitForTransactionReceipt({ hash })
}

/** The custom error a call reverts with, as `Name(args…)`, decoded from every contract's errors. */
async function revertOf(to: Hex, data: Hex, authorize?: PrivateKeyAccount): Promise<string> {
  const { args } = decodeFunctionData({ abi: delegateAbi, data })
  try {
    await client.simulateContract({
      account: sponsor,
      address: to,
      abi: [...delegateAbi, ...errorsAbi],
      functionName: 'execute',
      args: args as [Hex, Hex],
      ...(authorize ? { authorizationList: await delegation(authorize) } : {}),
    })
  } catch (error) {
    const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError)
    if (reverted instanceof ContractFunctionRevertedError && reverted.data)
      return `${reverted.data.errorName}(${(reverted.data.args ?? []).map(String).join(',')})`
    throw error
  }
  throw new Error('the call did not revert')
}

describe('LatchkeyDelegate on anvil', () => {
  it('runs a sponsored batch from a 0-ETH account atomically; the sponsor pays the gas', async () => {
    const user = await freshUser()
    const spender = privateKeyToAccount(generatePrivateKey()).address
    expect(await readDelegateNonce(httpEthRpc(node.url), user.address)).toBe(0n)
    const batch = {
      calls: [
        { to: token, value: 0n, data: erc20('approve', [spender, 500n]) },
        { to: token, value: 0n, data: erc20('transfer', [recipient, 300n]) },
      ],
      nonce: 0n,
      deadline: (await now()) + 600n,
    }
    const sponsorBefore = await client.getBalance({ address: sponsor.address })
    const receipt = await sponsorSends(user, await signedExecute(user, batch), true)
    expect(receipt.status).toBe('success')
    expect(receipt.from).toBe(sponsor.address.toLowerCase())
    expect(await balanceOf(user.address)).toBe(700n)
    expect(await balanceOf(recipient)).toBeGreaterThanOrEqual(300n)
    expect(
      await client.readContract({
        address: token,
        abi: tokenArtifact.abi,
        functionName: 'allowance',
        args: [user.address, spender],
      }),
    ).toBe(500n)
    expect(await client.getBalance({ address: user.address })).toBe(0n)
    expect(await client.getBalance({ address: sponsor.address })).toBe(
      sponsorBefore - receipt.gasUsed * receipt.effectiveGasPrice,
    )
    const rpc = httpEthRpc(node.url)
    expect(await readDelegation(rpc, user.address)).toBe(DELEGATE_ADDRESS.toLowerCase())
    expect(await readDelegateNonce(rpc, user.address)).toBe(1n)
    // The signed batch is logged with the nonce it consumed and who relayed it.
    const executed = receipt.logs.find((log) => log.address === user.address.toLowerCase())
    expect(executed?.topics).toEqual([
      keccak256(toHex('BatchExecuted(uint256,address)')),
      toHex(0n, { size: 32 }),
      `0x${sponsor.address.slice(2).toLowerCase().padStart(64, '0')}`,
    ])

    // The nonce lives in the ERC-7201 slot of "latchkey.delegate", and nothing is written at slot 0.
    const namespace = BigInt(keccak256(toHex('latchkey.delegate'))) - 1n
    const slot = (BigInt(keccak256(encodeAbiParameters([{ type: 'uint256' }], [namespace]))) >> 8n) << 8n
    expect(await client.getStorageAt({ address: user.address, slot: toHex(slot, { size: 32 }) })).toBe(
      toHex(1n, { size: 32 }),
    )
    expect(await client.getStorageAt({ address: user.address, slot: toHex(0n, { size: 32 }) })).toBe(
      toHex(0n, { size: 32 }),
    )

    // Already delegated: the next batch needs no authorization.
    const next = {
      calls: [{ to: token, value: 0n, data: erc20('transfer', [recipient, 1n]) }],
      nonce: 1n,
      deadline: batch.deadline,
    }
    expect((await sponsorSends(user, await signedExecute(user, next), false)).status).toBe('success')
    expect(await balanceOf(user.address)).toBe(699n)
  })

  it('hashes and encodes a batch as the contract, viem and micro-eth-signer do', async () => {
    const user = await freshUser(0n)
    // Delegate the account first so that the contract's own hashBatchExecution can be called on it.
    await sponsorSends(user, '0x', true)
    const calls = [
      { to: token, value: 7n, data: erc20('transfer', [recipient, 1n]) },
      { to: '0x0000000000000000000000000000000000000000', value: 0n, data: '0x' },
    ]
    const parameters = { chainId: 31337n, account: user.address, calls, nonce: 3n, deadline: 1_900_000_000n }
    const digest = toHex(batchExecutionDigest(parameters))
    const typed = batchExecutionTypedData(parameters)
    expect(JSON.parse(JSON.stringify(typed))).toEqual(typed)
    expect(
      hashTypedData({
        domain: { ...typed.domain, chainId: 31337, verifyingContract: user.address },
        types: {
          Call: [...BATCH_EXECUTION_TYPES.Call],
          BatchExecution: [...BATCH_EXECUTION_TYPES.BatchExecution],
        },
        primaryType: 'BatchExecution',
        message: {
          calls: calls as { to: Hex; value: bigint; data: Hex }[],
          nonce: 3n,
          deadline: 1_900_000_000n,
        },
      }),
    ).toBe(digest)
    expect(
      await client.readContract({
        address: user.address,
        abi: delegateAbi,
        functionName: 'hashBatchExecution',
        args: [
          calls.map((call) => ({ target: call.to, value: call.value, callData: call.data })),
          3n,
          1_900_000_000n,
        ],
      }),
    ).toBe(digest)
    // The JSON typed data is what the service's EIP-712 signer signs: the same digest.
    const key = `0x${'01'.repeat(32)}` as const
    const serviceSigned = signTyped(typed as never, key, false)
    expect(serviceSigned).toBe(await privateKeyToAccount(key).sign({ hash: digest }))
    expect(recoverAddressTyped(serviceSigned, typed as never)).toBe(privateKeyToAccount(key).address)
    const rsv = await signBatch(user, user.address, { calls, nonce: 3n, deadline: 1_900_000_000n })
    expect(encodeExecuteBatch({ calls, nonce: 3n, deadline: 1_900_000_000n, signature: rsv })).toBe(
      encodeFunctionData({
        abi: delegateAbi,
        functionName: 'execute',
        args: [
          EXECUTE_BATCH_WITH_OP_DATA_MODE,
          encodeAbiParameters(
            [
              { type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] },
              { type: 'bytes' },
            ],
            [
              calls.map((call) => [call.to, call.value, call.data]) as [Hex, bigint, Hex][],
              encodeAbiParameters(
                [{ type: 'uint256' }, { type: 'uint256' }, { type: 'bytes' }],
                [3n, 1_900_000_000n, rsv],
              ),
            ],
          ),
        ],
      }),
    )
    expect(
      await client.readContract({
        address: user.address,
        abi: delegateAbi,
        functionName: 'supportsExecutionMode',
        args: [EXECUTE_BATCH_WITH_OP_DATA_MODE],
      }),
    ).toBe(true)
  })

  it('refuses a replayed batch (same nonce) and an expired one', async () => {
    const user = await freshUser()
    const batch = {
      calls: [{ to: token, value: 0n, data: erc20('transfer', [recipient, 10n]) }],
      nonce: 0n,
      deadline: (await now()) + 600n,
    }
    const data = await signedExecute(user, batch)
    expect((await sponsorSends(user, data, true)).status).toBe('success')
    expect(await revertOf(user.address, data)).toBe('InvalidBatchNonce(1,0)')
    // A nonce from the future is refused as well: batches run in order.
    const ahead = await signedExecute(user, { ...batch, nonce: 2n })
    expect(await revertOf(user.address, ahead)).toBe('InvalidBatchNonce(1,2)')

    const deadline = (await now()) - 1n
    const expired = await signedExecute(user, { ...batch, nonce: 1n, deadline })
    expect(await revertOf(user.address, expired)).toBe(`ExpiredBatch(${deadline})`)
    expect(await balanceOf(user.address)).toBe(990n)
  })

  it('refuses a signature by another key, for another chain, account or delegate', async () => {
    const user = await freshUser()
    const other = privateKeyToAccount(generatePrivateKey())
    const batch = {
      calls: [{ to: token, value: 0n, data: erc20('transfer', [recipient, 10n]) }],
      nonce: 0n,
      deadline: (await now()) + 600n,
    }
    const withSignature = (signature: Hex) => encodeExecuteBatch({ ...batch, signature }) as Hex

    const byOther = withSignature(await signBatch(other, user.address, batch))
    expect(await revertOf(user.address, byOther, user)).toBe('InvalidBatchSignature()')
    const otherChain = withSignature(await signBatch(user, user.address, batch, 1n))
    expect(await revertOf(user.address, otherChain, user)).toBe('InvalidBatchSignature()')
    // Signed for another account's domain (verifyingContract), e.g. the delegate's own address.
    const otherAccount = withSignature(await signBatch(user, DELEGATE_ADDRESS as Hex, batch))
    expect(await revertOf(user.address, otherAccount, user)).toBe('InvalidBatchSignature()')
    // Signed for a delegate with another EIP-712 name.
    const typed = batchExecutionTypedData({ chainId: 31337n, account: user.address, ...batch })
    const otherDelegate = withSignature(
      await user.signTypedData({
        domain: { name: 'OtherDelegate', version: '1', chainId: 31337, verifyingContract: user.address },
        types: {
          Call: [...BATCH_EXECUTION_TYPES.Call],
          BatchExecution: [...BATCH_EXECUTION_TYPES.BatchExecution],
        },
        primaryType: 'BatchExecution',
        message: {
          calls: batch.calls as { to: Hex; value: bigint; data: Hex }[],
          nonce: 0n,
          deadline: batch.deadline,
        },
      }),
    )
    expect(typed.domain.name).toBe('LatchkeyDelegate')
    expect(await revertOf(user.address, otherDelegate, user)).toBe('InvalidBatchSignature()')
    // A malformed signature (s in the upper half) is refused the same way.
    const signature = await signBatch(user, user.address, batch)
    const highS = (BigInt(`0x${signature.slice(66, 130)}`) + 1n).toString(16).padStart(64, '0')
    expect(
      await revertOf(
        user.address,
        withSignature(`${signature.slice(0, 66)}${highS}${signature.slice(130)}` as Hex),
        user,
      ),
    ).toBe('InvalidBatchSignature()')

    // The right signature still works after all of them.
    expect((await sponsorSends(user, withSignature(signature), true)).status).toBe('success')
  })

  it('refuses malformed opData', async () => {
    const user = await freshUser(0n)
    const executeWith = (opData: Hex) =>
      encodeFunctionData({
        abi: delegateAbi,
        functionName: 'execute',
        args: [
          EXECUTE_BATCH_WITH_OP_DATA_MODE,
          encodeAbiParameters(
            [
              { type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] },
              { type: 'bytes' },
            ],
            [[[recipient, 0n, '0x']], opData],
          ),
        ],
      })
    const word = (value: bigint) => toHex(value, { size: 32 }).slice(2)
    // Too short for nonce, deadline and a signature offset.
    expect(await revertOf(user.address, executeWith('0x1234'), user)).toBe('ERC7579DecodingError()')
    // A signature offset past the end of opData.
    expect(
      await revertOf(user.address, executeWith(`0x${word(0n)}${word(2n ** 40n)}${word(0x1000n)}`), user),
    ).toBe('ERC7579DecodingError()')
    // A signature length past the end of opData.
    expect(
      await revertOf(
        user.address,
        executeWith(`0x${word(0n)}${word(2n ** 40n)}${word(0x60n)}${word(65n)}`),
        user,
      ),
    ).toBe('ERC7579DecodingError()')
  })

  it('rolls the whole batch back when one call reverts', async () => {
    const user = await freshUser()
    const batch = {
      calls: [
        { to: token, value: 0n, data: erc20('transfer', [recipient, 10n]) },
        { to: token, value: 0n, data: erc20('transfer', [recipient, 5000n]) },
      ],
      nonce: 0n,
      deadline: (await now()) + 600n,
    }
    const data = await signedExecute(user, batch)
    expect(await revertOf(user.address, data, user)).toBe(
      `ERC20InsufficientBalance(${user.address},990,5000)`,
    )
    // Mined anyway (a fixed gas limit skips estimation): reverted, nothing moved, the nonce unused.
    const recipientBefore = await balanceOf(recipient)
    const receipt = await sponsorSends(user, data, true, 300_000n)
    expect(receipt.status).toBe('reverted')
    expect(await balanceOf(user.address)).toBe(1000n)
    expect(await balanceOf(recipient)).toBe(recipientBefore)
    expect(await readDelegateNonce(httpEthRpc(node.url), user.address)).toBe(0n)
    expect(await client.getBalance({ address: user.address })).toBe(0n)
  })

  it('stops a call that re-enters with a batch already consumed, or without a signature', async () => {
    const user = await freshUser()
    const deadline = (await now()) + 600n
    const reenter = (data: Hex): DelegateCall => ({
      to: reenterer,
      value: 0n,
      data: encodeFunctionData({
        abi: reentererArtifact.abi,
        functionName: 'reenter',
        args: [user.address, data],
      }),
    })
    // The user signed two batches for nonce 0; the one that runs first re-enters with the other.
    const pending = await signedExecute(user, {
      calls: [{ to: token, value: 0n, data: erc20('transfer', [recipient, 100n]) }],
      nonce: 0n,
      deadline,
    })
    const outer = await signedExecute(user, { calls: [reenter(pending)], nonce: 0n, deadline })
    expect(await revertOf(user.address, outer, user)).toBe('InvalidBatchNonce(1,0)')

    // Re-entering without opData needs the account itself as the caller.
    const unsigned = encodeFunctionData({
      abi: delegateAbi,
      functionName: 'execute',
      args: [
        `0x01${'0'.repeat(62)}`,
        encodeAbiParameters(
          [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
          [[[token, 0n, erc20('transfer', [recipient, 100n])]]],
        ),
      ],
    })
    const sneaky = await signedExecute(user, { calls: [reenter(unsigned)], nonce: 0n, deadline })
    expect(await revertOf(user.address, sneaky, user)).toBe(`AccountUnauthorized(${reenterer})`)

    // Re-entry with the next batch the user signed runs it: both are the user's.
    const second = await signedExecute(user, {
      calls: [{ to: token, value: 0n, data: erc20('transfer', [recipient, 100n]) }],
      nonce: 1n,
      deadline,
    })
    const first = await signedExecute(user, { calls: [reenter(second)], nonce: 0n, deadline })
    expect((await sponsorSends(user, first, true)).status).toBe('success')
    expect(await balanceOf(user.address)).toBe(900n)
    expect(await readDelegateNonce(httpEthRpc(node.url), user.address)).toBe(2n)
  })

  it("answers ERC-1271 with the account's own key, so its signatures still verify once it has code", async () => {
    const user = await freshUser(0n)
    await sponsorSends(user, '0x', true)
    expect(await readDelegation(httpEthRpc(node.url), user.address)).toBe(DELEGATE_ADDRESS.toLowerCase())
    const message = 'Sign in to example.com'
    expect(
      await client.verifyMessage({
        address: user.address,
        message,
        signature: await user.signMessage({ message }),
      }),
    ).toBe(true)
    const other = privateKeyToAccount(generatePrivateKey())
    expect(
      await client.verifyMessage({
        address: user.address,
        message,
        signature: await other.signMessage({ message }),
      }),
    ).toBe(false)
    const isValidSignature = (hash: Hex, signature: Hex) =>
      client.readContract({
        address: user.address,
        abi: delegateAbi,
        functionName: 'isValidSignature',
        args: [hash, signature],
      })
    const hash = keccak256(toHex(message))
    expect(await isValidSignature(hash, await user.sign({ hash }))).toBe('0x1626ba7e')
    expect(await isValidSignature(hash, await other.sign({ hash }))).toBe('0xffffffff')
    expect(await isValidSignature(hash, '0x1234')).toBe('0xffffffff')
  })

  it('lets the account call itself without a signature, and still receive ETH', async () => {
    const user = await freshUser()
    const hash = await sponsorWallet.sendTransaction({
      account: sponsor,
      chain,
      to: user.address,
      value: 10n ** 17n,
    })
    await client.waitForTransactionReceipt({ hash })
    const wallet = createWalletClient({
      account: user,
      chain,
      transport: http(node.url),
      pollingInterval: 50,
    })
    const authorization = await wallet.signAuthorization({
      contractAddress: DELEGATE_ADDRESS as Hex,
      executor: 'self',
    })
    const selfCall = await wallet.sendTransaction({
      account: user,
      chain,
      to: user.address,
      authorizationList: [authorization],
      data: encodeFunctionData({
        abi: delegateAbi,
        functionName: 'execute',
        args: [
          `0x01${'0'.repeat(62)}`,
          encodeAbiParameters(
            [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
            [
              [
                [token, 0n, erc20('transfer', [recipient, 1n])],
                [recipient, 1000n, '0x'],
              ],
            ],
          ),
        ],
      }),
    })
    expect((await client.waitForTransactionReceipt({ hash: selfCall })).status).toBe('success')
    expect(await balanceOf(user.address)).toBe(999n)
    // Another caller cannot use that mode.
    const other = await revertOf(
      user.address,
      encodeFunctionData({
        abi: delegateAbi,
        functionName: 'execute',
        args: [
          `0x01${'0'.repeat(62)}`,
          encodeAbiParameters(
            [{ type: 'tuple[]', components: [{ type: 'address' }, { type: 'uint256' }, { type: 'bytes' }] }],
            [[[token, 0n, erc20('transfer', [recipient, 1n])]]],
          ),
        ],
      }),
    )
    expect(other).toBe(`AccountUnauthorized(${sponsor.address})`)
    const topUp = await sponsorWallet.sendTransaction({
      account: sponsor,
      chain,
      to: user.address,
      value: 1n,
    })
    expect((await client.waitForTransactionReceipt({ hash: topUp })).status).toBe('success')
  })
})
