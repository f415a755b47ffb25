/**
 * An EIP-712 `Permit` whose domain names `chainId` (as given: the tests spell it as numbers and
 * strings), the typed data the provider's chain tests ask it to sign.
 */
export const permitTypedData = (chainId: unknown) => ({
  domain: {
    name: 'Token',
    version: '1',
    chainId,
    verifyingContract: '0x000000000000000000000000000000000000c0de',
  },
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Permit: [
      { name: 'spender', type: 'address' },
      { name: 'value', type: 'uint256' },
    ],
  },
  primaryType: 'Permit',
  message: { spender: '0x000000000000000000000000000000000000dEaD', value: '1000' },
})
