import { ServiceError } from '../kernel/base/errors.ts'
/** A policy expression that does not parse: `position` is the 0-based offset of the problem. */
export class PolicySyntaxError extends ServiceError {
  override name = 'PolicySyntaxError'
  readonly position: number

  constructor(reason: string, position: number) {
    super(`${reason} at position ${position}`)
    this.position = position
  }
}
