/**
 * Raw-library throughput of the service's signing and derivation paths. Prints figures; not a test.
 * Run: npx tsx bench/signing.ts
 */
import type { AccountSpec } from '@latchkey/protocol'
import {
  deriveAccount,
  generateMnemonic,
  mnemonicToSeed,
  signRawPayload,
} from '../packages/service/src/kernel/crypto/index.ts'

function measure(label: string, run: () => void, minMs = 1500): number {
  for (let i = 0; i < 20; i++) run() // warm up JIT and noble precomputes
  let count = 0
  const start = performance.now()
  while (performance.now() - start < minMs) {
    run()
    count++
  }
  const perSecond = (count * 1000) / (performance.now() - start)
  console.log(
    `${label.padEnd(58)} ${perSecond.toFixed(0).padStart(8)} /s  (${(1000 / perSecond).toFixed(3)} ms each)`,
  )
  return perSecond
}

const mnemonic = generateMnemonic(12)
const seed = mnemonicToSeed(mnemonic)
const ACCOUNTS: AccountSpec[] = [
  {
    curve: 'CURVE_SECP256K1',
    pathFormat: 'PATH_FORMAT_BIP32',
    path: "m/44'/60'/0'/0/0",
    addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
  },
  {
    curve: 'CURVE_ED25519',
    pathFormat: 'PATH_FORMAT_BIP32',
    path: "m/44'/501'/0'/0'",
    addressFormat: 'ADDRESS_FORMAT_SOLANA',
  },
  {
    curve: 'CURVE_SECP256K1',
    pathFormat: 'PATH_FORMAT_BIP32',
    path: "m/84'/0'/0'/0/0",
    addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
  },
]
const [eth, sol] = ACCOUNTS.map((spec) => deriveAccount(seed, spec))
const payload = 'ab'.repeat(32)

console.log(`node ${process.version}, ${process.arch}`)
measure('secp256k1 signRawPayload (HEX, KECCAK256)', () =>
  signRawPayload({
    curve: 'CURVE_SECP256K1',
    privateKey: eth!.privateKey,
    payload,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_KECCAK256',
  }),
)
measure('secp256k1 signRawPayload (HEX, NO_OP)', () =>
  signRawPayload({
    curve: 'CURVE_SECP256K1',
    privateKey: eth!.privateKey,
    payload,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  }),
)
measure('ed25519 signRawPayload (HEX, NOT_APPLICABLE)', () =>
  signRawPayload({
    curve: 'CURVE_ED25519',
    privateKey: sol!.privateKey,
    payload,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
  }),
)
measure('mnemonicToSeed (PBKDF2-SHA512, 2048 rounds)', () => mnemonicToSeed(mnemonic), 1000)
measure(
  'derive ETH+SOL+BTC accounts from a seed',
  () => {
    for (const spec of ACCOUNTS) deriveAccount(seed, spec)
  },
  1000,
)
measure(
  'create wallet: mnemonic + seed + ETH+SOL+BTC accounts',
  () => {
    const s = mnemonicToSeed(generateMnemonic(12))
    for (const spec of ACCOUNTS) deriveAccount(s, spec)
  },
  1000,
)
