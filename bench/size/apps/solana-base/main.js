// What an app using latchkey/core and @solana/kit already ships: a Latchkey client that signs
// payloads, and a kit transfer built, signed by a signer and serialised. The latchkey/solana app
// signs the same transfer with the adapter; the difference is the adapter's cost.

import {
  appendTransactionMessageInstruction,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit'
import { getTransferSolInstruction } from '@solana-program/system'
import { createLatchkey, signRawPayloads } from 'latchkey/core'

export const client = createLatchkey({
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
})
export const address = '11111111111111111111111111111112'

/** A signed transfer from `signer`, as base64 wire bytes. */
export async function transfer(signer) {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(signer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 0n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        getTransferSolInstruction({ source: signer, destination: address, amount: lamports(1n) }),
        m,
      ),
  )
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message))
}

const output = document.getElementById('root')
document.addEventListener('click', async () => {
  const wire = await transfer(await generateKeyPairSigner())
  const { signatures } = await signRawPayloads(client, {
    signWith: address,
    payloads: ['00'],
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
  })
  output.textContent = `${wire} ${signatures.length}`
})
