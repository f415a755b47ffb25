/**
 * Bad input to a crypto helper. `field` names the request field at fault so the API can answer
 * 400 with it (e.g. 'path', 'addressFormat', 'mnemonicLength').
 */
export class CryptoInputError extends Error {
  override name = 'CryptoInputError'
  readonly field?: string

  constructor(message: string, field?: string) {
    super(message)
    if (field !== undefined) this.field = field
  }
}
