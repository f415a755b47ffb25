// Headless latchkey/core, no React: e-mail OTP sign-in, then sign a payload with a wallet
// account. The whole page is plain DOM so only core's bytes are measured.
import { completeOtpSignIn, createLatchkey, signRawPayloads, startOtpSignIn } from 'latchkey/core'

const client = createLatchkey({
  authProxyUrl: 'https://auth.example.test',
  baseUrl: 'https://api.example.test',
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
})

const root = document.getElementById('root')
root.innerHTML = `
  <form id="email"><input name="email" type="email" required /><button>Send code</button></form>
  <form id="code"><input name="code" inputmode="numeric" required /><button>Sign in</button></form>
  <form id="sign"><input name="address" required /><input name="message" /><button>Sign</button></form>
  <output></output>`
const output = root.querySelector('output')
const field = (event, name) => {
  event.preventDefault()
  return String(new FormData(event.currentTarget).get(name) ?? '')
}
const run = (action) => action().catch((error) => (output.textContent = error.message))

let pending
root.querySelector('#email').addEventListener('submit', (event) => {
  const contact = field(event, 'email')
  run(async () => {
    pending = await startOtpSignIn(client, { otpType: 'OTP_TYPE_EMAIL', contact })
    output.textContent = `code sent to ${pending.contact}`
  })
})
root.querySelector('#code').addEventListener('submit', (event) => {
  const otpCode = field(event, 'code')
  run(async () => {
    const { session } = await completeOtpSignIn(client, { ...pending, otpCode })
    output.textContent = `signed in as ${session.userId}`
  })
})
root.querySelector('#sign').addEventListener('submit', (event) => {
  const signWith = field(event, 'address')
  const message = String(new FormData(event.currentTarget).get('message') ?? '')
  run(async () => {
    const { signatures } = await signRawPayloads(client, {
      signWith,
      payloads: [message],
      encoding: 'PAYLOAD_ENCODING_TEXT_UTF8',
      hashFunction: 'HASH_FUNCTION_SHA256',
    })
    output.textContent = JSON.stringify(signatures)
  })
})
