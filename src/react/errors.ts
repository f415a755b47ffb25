import { LatchkeyError } from '../core/baseErrors.ts'

/** A Latchkey hook ran outside `<LatchkeyProvider>` and was given no `client`. */
export class LatchkeyProviderNotFoundError extends LatchkeyError {
  override name = 'LatchkeyProviderNotFoundError'
  constructor() {
    super('Latchkey hooks must be used inside <LatchkeyProvider> (or be given a `client`)', {
      code: 'PROVIDER_MISSING',
    })
  }
}
