import { describe, expect, it } from 'vitest'
import { nodeText, RpcRefusedError, redactNodeMessage, sendRpc, urlSecrets } from './sendRpc.ts'

const KEY = 'Kx7qPz-api-key-42'
const URL_WITH_SECRETS = `https://latchkey:pa55-w0rd%21@eth.example/v2/${KEY}?api-key=q-token%2B99&x=1`

/** A node at `URL_WITH_SECRETS` refusing every call with `message`. */
const refusing =
  (message: string): typeof fetch =>
  async (_, init) => {
    const { id } = JSON.parse(String(init?.body)) as { id: number }
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32005, message } }))
  }

describe("a node's text quoting a part of its URL", () => {
  const secrets = urlSecrets(URL_WITH_SECRETS)

  it("hides the key, the path, the query's token and the password, in any case and as URL-encoded or JSON-escaped", () => {
    for (const quoted of [
      `daily request quota exceeded for API key ${KEY} (POST /v2/${KEY})`,
      `key ${KEY.toUpperCase()} is over its limit`,
      `{"path":"\\/v2\\/${KEY}"}`,
      `token q-token+99 expired`,
      `token q-token%2B99 expired`,
      `bad credentials latchkey / pa55-w0rd!`,
      `bad credentials pa55-w0rd%21`,
    ]) {
      const text = redactNodeMessage(quoted, secrets)
      expect(text, quoted).toContain('<redacted>')
      for (const secret of [KEY, KEY.toUpperCase(), 'q-token', 'pa55-w0rd', 'latchkey', '\\/v2\\/'])
        expect(text, quoted).not.toContain(secret)
    }
    expect(redactNodeMessage(`quota exceeded for ${KEY} (POST /v2/${KEY})`, secrets)).toBe(
      'quota exceeded for <redacted> (POST <redacted>)',
    )
  })

  it('keeps the words of a part too short to be a key ("v2", "x=1"): the senders read them', () => {
    expect(redactNodeMessage('nonce too low: v2 x 1', secrets)).toBe('nonce too low: v2 x 1')
  })

  it('hides a key cut by the bound on the message length', () => {
    const text = redactNodeMessage(`${'a'.repeat(295)} ${KEY}`, secrets)
    expect(text).not.toContain(KEY.slice(0, 4))
    expect(text.length).toBeLessThanOrEqual(301)
  })

  it('hides URLs written with an escaped or encoded "://"', () => {
    for (const quoted of [
      'upstream https:\\/\\/user:pw@10.1.2.3\\/rpc failed',
      'upstream https%3A%2F%2F10.1.2.3%2Frpc failed',
    ])
      expect(redactNodeMessage(quoted)).toBe('upstream <url> failed')
  })

  it('sendRpc: a refusal, and the text of an answer through nodeText, without the secrets', async () => {
    const rpc = sendRpc(URL_WITH_SECRETS, refusing(`quota of ${KEY} exceeded`), 1000)
    const refused = await rpc('eth_chainId', []).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(RpcRefusedError)
    expect((refused as Error).message).toBe('quota of <redacted> exceeded')
    expect(nodeText(rpc, `log: q-token+99 and /v2/${KEY}`)).toBe('log: <redacted> and <redacted>')
    // A caller of its own (a test's fake node) without `redact`: the URL-shaped text only.
    const bare = async () => undefined
    expect(nodeText(bare, 'see https://a.example/x?k=1')).toBe('see <url>')
  })
})
