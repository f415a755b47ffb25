import { describe, expect, it } from 'vitest'
import { parseCli } from './parseCli.ts'

describe('parseCli', () => {
  it('reads every flag, with or without the dev subcommand', () => {
    const argv = [
      'dev',
      '--port',
      '0',
      '--data-dir',
      '.latchkey',
      '--json',
      '--rpc',
      'eip155:31337=http://127.0.0.1:8545',
      '--rpc',
      'eip155:1=https://rpc.example',
      '--allowed-origins',
      'http://a.test, http://b.test',
      '--providers',
      'email,sms,passkey',
      '--session-seconds',
      '600',
      '--rp-id',
      'example.test',
    ]
    expect(parseCli(argv)).toEqual({
      port: 0,
      host: '127.0.0.1',
      dataDir: '.latchkey',
      json: true,
      rpc: { 'eip155:31337': 'http://127.0.0.1:8545', 'eip155:1': 'https://rpc.example' },
      allowedOrigins: ['http://a.test', 'http://b.test'],
      providers: ['email', 'sms', 'passkey'],
      sessionSeconds: '600',
      rpId: 'example.test',
    })
    expect(parseCli([])).toMatchObject({ port: 8787, json: false, dataDir: undefined, rpc: {} })
    expect(parseCli(['--help'])).toBe('help')
  })

  it.each([
    [['--port', '70000'], /--port must be/],
    [['--rpc', 'mainnet'], /--rpc must look like/],
    [['--providers', 'email,telepathy'], /unknown sign-in method telepathy/],
    [['--session-seconds', '0'], /--session-seconds must be/],
    [['--colour'], /Unknown option/],
    [['serve'], /Unexpected argument/],
  ])('explains %j', (argv, message) => {
    expect(() => parseCli(argv as string[])).toThrow(message)
  })
})
