import { describe, expect, it } from 'vitest'
import { networkName } from './networkName.ts'

describe('networkName', () => {
  it('names the local node and public networks, and an unknown chain by its number', () => {
    expect(networkName('eip155:31337')).toBe('Local (anvil)')
    expect(networkName('eip155:11155111')).toBe('Ethereum Sepolia')
    expect(networkName('eip155:1')).toBe('Ethereum')
    expect(networkName('eip155:424242')).toBe('Chain 424242')
    expect(networkName('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1')).toBe(
      'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    )
  })
})
