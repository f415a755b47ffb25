// The solana-base app plus latchkey/solana: the same transfer signed by the Latchkey kit signer,
// and a message. Its size minus solana-base's is latchkey/solana's cost beyond @solana/kit.
import { createSignableMessage } from '@solana/kit'
import { createLatchkeySolanaSigner } from 'latchkey/solana'
import { address, client, transfer } from '../solana-base/main.js'

document.addEventListener('dblclick', async () => {
  const signer = createLatchkeySolanaSigner(client, { address })
  const wire = await transfer(signer)
  const [signed] = await signer.signMessages([createSignableMessage('size')])
  document.title = `${wire} ${Object.keys(signed).length}`
})
