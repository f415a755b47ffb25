import { FieldError } from '../base/errors.ts'

/**
 * Bad input to a crypto helper: a 400 `FIELD_INVALID`. `field` names the request field at fault
 * relative to the activity's parameters (e.g. 'path', 'addressFormat', 'mnemonicLength'); the
 * error mapper prefixes it (`parameters.path`).
 */
export class CryptoInputError extends FieldError {
  override name = 'CryptoInputError'

  constructor(message: string, field?: string) {
    super({ field, message })
  }
}

export type CryptoInputErrorType = CryptoInputError
