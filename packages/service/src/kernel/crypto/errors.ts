import { ApiError } from '../base/errors.ts'

/**
 * Bad input to a crypto helper: a 400 `FIELD_INVALID`. `field` names the request field at fault
 * relative to the activity's parameters (e.g. 'path', 'addressFormat', 'mnemonicLength'); the
 * error mapper prefixes it (`parameters.path`).
 */
export class CryptoInputError extends ApiError {
  override name = 'CryptoInputError'

  constructor(message: string, field?: string) {
    super('FIELD_INVALID', message, field)
  }
}

export type CryptoInputErrorType = CryptoInputError
