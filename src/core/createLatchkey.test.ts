import { describe, expect, expectTypeOf, it } from 'vitest'
import { createLatchkey, type LatchkeyConfigParameter } from './createLatchkey.ts'
import { ConfigInvalidError } from './errors.ts'

const ids = {
  authProxyConfigId: '00000000-0000-4000-8000-000000000001',
  organizationId: '00000000-0000-4000-8000-000000000000',
}

describe('createLatchkey’s config type', () => {
  it('makes a required option that may be undefined a type error that names it and the fix', () => {
    // What `import.meta.env` gives once an app declares its variables, here unset.
    const env: { VITE_LATCHKEY_AUTH_PROXY_URL?: string } = {}
    expect(() =>
      createLatchkey({
        // @ts-expect-error authProxyUrl may be undefined: set its env variable …
        authProxyUrl: env.VITE_LATCHKEY_AUTH_PROXY_URL,
        baseUrl: 'http://127.0.0.1:8787',
        ...ids,
      }),
    ).toThrow(ConfigInvalidError)
    // The sentence the type checker prints, for each required option.
    type Hint<K extends keyof LatchkeyConfigParameter> = keyof Exclude<LatchkeyConfigParameter[K], string>
    expectTypeOf<
      Hint<'authProxyUrl'>
    >().toEqualTypeOf<'authProxyUrl may be undefined: set its env variable (npx latchkey-service dev --env .env.local writes them) and check it is a string'>()
    expectTypeOf<
      Hint<'organizationId'>
    >().toEqualTypeOf<'organizationId may be undefined: set its env variable (npx latchkey-service dev --env .env.local writes them) and check it is a string'>()
  })

  it('takes strings, an optional signer key and a fetch whose parameters it types', () => {
    const client = createLatchkey({
      authProxyUrl: 'http://127.0.0.1:8787',
      baseUrl: 'http://127.0.0.1:8787',
      ...ids,
      trustedSignerPublicKey: undefined,
      fetch: (input, init) => {
        expectTypeOf(input).toEqualTypeOf<Parameters<typeof fetch>[0]>()
        return fetch(input, init)
      },
    })
    expect(client.config.authProxyUrl).toBe('http://127.0.0.1:8787')
    client.destroy()
  })
})
