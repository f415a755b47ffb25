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

/** What `sendRpc` at `url` throws when the node refuses every call with `message`. */
async function refusalThrough(url: string, message: string): Promise<RpcRefusedError> {
  const fetchFn: typeof fetch = async (_input, init) => {
    const { id } = JSON.parse(String(init?.body)) as { id: number }
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32005, message } }))
  }
  const error = await sendRpc(
    url,
    fetchFn,
    2_000,
  )('eth_getTransactionCount', ['0x0', 'pending']).catch((e: unknown) => e)
  expect(error).toBeInstanceOf(RpcRefusedError)
  return error as RpcRefusedError
}

describe('a key quoted by the node in the form it has in the URL or on the wire', () => {
  it("a query value with a '+' (a base64 key), echoed as written", async () => {
    const key = 'Zm9v+YmFy/cXV4eHl6'
    const refused = await refusalThrough(
      `https://gw.example/rpc?apikey=${key}`,
      `quota exceeded for api key ${key}`,
    )
    expect(refused.message).toBe('quota exceeded for api key <redacted>')
    // ... and as the query's decoding reads it (a space), and as URL-encoded.
    for (const form of ['Zm9v YmFy/cXV4eHl6', 'Zm9v%2BYmFy%2FcXV4eHl6'])
      expect(redactNodeMessage(`key ${form}`, urlSecrets(`https://gw.example/rpc?apikey=${key}`))).toBe(
        'key <redacted>',
      )
  })

  it('the Basic authorization the service sends for user:password, echoed by a proxy', async () => {
    const basic = Buffer.from('latchkey:s3cret-Pa55').toString('base64')
    const refused = await refusalThrough(
      'https://latchkey:s3cret-Pa55@gw.example/rpc',
      `invalid credentials (Authorization: Basic ${basic})`,
    )
    expect(refused.message).toBe('invalid credentials (Authorization: Basic <redacted>)')
  })

  it('a key written as the query itself (a name without a value), or as a name, echoed', async () => {
    const key = 'a1b2c3d4e5f6a7b8c9d0'
    expect((await refusalThrough(`https://gw.example/rpc?${key}`, `unknown project ${key}`)).message).toBe(
      'unknown project <redacted>',
    )
    expect(
      (await refusalThrough(`https://gw.example/rpc?x=1&${key}=1`, `unknown project ${key}`)).message,
    ).toBe('unknown project <redacted>')
  })
})

describe("a refusal keeps the node's own words apart from what is shown", () => {
  it('nodeText is the raw text, and is never serialised, listed or in the message', async () => {
    const refused = await refusalThrough(
      'https://gw.example/v2/k3yInPath-0f9e8d7c6b?tag=already',
      'already known',
    )
    expect(refused.message).toBe('<redacted> known')
    expect(refused.nodeText).toBe('already known')
    expect(Object.keys(refused)).not.toContain('nodeText')
    expect(JSON.stringify(refused)).not.toContain('already')
    expect(String(refused)).not.toContain('already')
    expect({ ...refused }).not.toHaveProperty('nodeText')
  })

  it('a refusal made without the node text (a test of its own) reads its message', () => {
    expect(new RpcRefusedError('nonce too low').nodeText).toBe('nonce too low')
  })
})
