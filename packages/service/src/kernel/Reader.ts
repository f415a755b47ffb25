import { FieldError } from './base/errors.ts'

/** Largest array any request may carry (accounts, payloads, users, ids ...). */
export const MAX_ARRAY = 100
/** Longest string field (mnemonic bundles and attestation objects stay well below). */
export const MAX_STRING = 64 * 1024

type Json = Record<string, unknown>

const kindOf = (value: unknown) => (Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value)

/**
 * Reads one JSON object field by field, throwing a 400 `ApiError` that names the offending
 * field by its full path (`parameters.accounts[2].curve`). Unknown fields are ignored, like the
 * public service does, so newer clients keep working.
 */
export class Reader {
  readonly value: Json
  readonly path: string

  constructor(value: unknown, path: string) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new FieldError({
        code: value === undefined ? 'FIELD_REQUIRED' : 'FIELD_INVALID',
        field: path,
        reason: `must be an object, got ${kindOf(value)}`,
      })
    this.value = value as Json
    this.path = path
  }

  field(name: string): string {
    return this.path ? `${this.path}.${name}` : name
  }

  has(name: string): boolean {
    return this.value[name] !== undefined && this.value[name] !== null
  }

  private required(name: string): unknown {
    const value = this.value[name]
    if (value === undefined || value === null)
      throw new FieldError({ code: 'FIELD_REQUIRED', field: this.field(name), reason: 'is required' })
    return value
  }

  string(
    name: string,
    options: { min?: number; max?: number; pattern?: RegExp; hint?: string } = {},
  ): string {
    const value = this.required(name)
    const field = this.field(name)
    if (typeof value !== 'string')
      throw new FieldError({ field, reason: `must be a string, got ${kindOf(value)}` })
    const { min = 1, max = MAX_STRING } = options
    if (value.length < min)
      throw new FieldError({
        code: min === 1 ? 'FIELD_REQUIRED' : 'FIELD_INVALID',
        field,
        message: min === 1 ? `${field} must not be empty` : `${field} must be at least ${min} characters`,
      })
    if (value.length > max)
      throw new FieldError({ code: 'PAYLOAD_TOO_LARGE', field, reason: `must be at most ${max} characters` })
    if (options.pattern && !options.pattern.test(value))
      throw new FieldError({ field, reason: `must be ${options.hint ?? `like ${options.pattern}`}` })
    return value
  }

  optString(name: string, options?: Parameters<Reader['string']>[1]): string | undefined {
    return this.has(name) ? this.string(name, options) : undefined
  }

  /** A string of decimal digits (the wire carries int64 values as strings); numbers are accepted too. */
  uintString(name: string, options: { max?: number } = {}): string {
    const value = this.required(name)
    const field = this.field(name)
    const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
    if (typeof text !== 'string' || !/^\d{1,16}$/.test(text))
      throw new FieldError({ field, reason: 'must be a string of decimal digits' })
    if (options.max !== undefined && Number(text) > options.max)
      throw new FieldError({ field, reason: `must be at most ${options.max}` })
    return String(Number(text))
  }

  optUintString(name: string, options?: { max?: number }): string | undefined {
    return this.has(name) ? this.uintString(name, options) : undefined
  }

  enum<T extends string>(name: string, allowed: readonly T[]): T {
    const value = this.required(name)
    const field = this.field(name)
    if (typeof value !== 'string' || !allowed.includes(value as T))
      throw new FieldError({
        code: 'ENUM_INVALID',
        field,
        reason: `must be one of ${allowed.length > 8 ? `${allowed.slice(0, 8).join(', ')} ...` : allowed.join(', ')}; got ${JSON.stringify(value)?.slice(0, 80)}`,
        extra: { allowed: [...allowed] },
      })
    return value as T
  }

  optEnum<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    return this.has(name) ? this.enum(name, allowed) : undefined
  }

  bool(name: string): boolean {
    const value = this.required(name)
    if (typeof value !== 'boolean')
      throw new FieldError({ field: this.field(name), reason: `must be a boolean, got ${kindOf(value)}` })
    return value
  }

  optBool(name: string): boolean | undefined {
    return this.has(name) ? this.bool(name) : undefined
  }

  int(name: string, options: { min?: number; max?: number; oneOf?: readonly number[] } = {}): number {
    const value = this.required(name)
    const field = this.field(name)
    const number = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value
    if (typeof number !== 'number' || !Number.isInteger(number))
      throw new FieldError({ field, reason: `must be an integer, got ${kindOf(value)}` })
    if (options.oneOf && !options.oneOf.includes(number))
      throw new FieldError({ field, reason: `must be one of ${options.oneOf.join(', ')}` })
    if (options.min !== undefined && number < options.min)
      throw new FieldError({ field, reason: `must be at least ${options.min}` })
    if (options.max !== undefined && number > options.max)
      throw new FieldError({ field, reason: `must be at most ${options.max}` })
    return number
  }

  optInt(name: string, options?: Parameters<Reader['int']>[1]): number | undefined {
    return this.has(name) ? this.int(name, options) : undefined
  }

  object(name: string): Reader {
    return new Reader(this.required(name), this.field(name))
  }

  optObject(name: string): Reader | undefined {
    return this.has(name) ? this.object(name) : undefined
  }

  /** An array whose items are read by `item`; `min`/`max` bound its length. */
  array<T>(
    name: string,
    item: (value: unknown, field: string) => T,
    options: { min?: number; max?: number } = {},
  ): T[] {
    const value = this.required(name)
    const field = this.field(name)
    if (!Array.isArray(value))
      throw new FieldError({ field, reason: `must be an array, got ${kindOf(value)}` })
    const { min = 0, max = MAX_ARRAY } = options
    if (value.length > max)
      throw new FieldError({
        code: 'PAYLOAD_TOO_LARGE',
        field,
        reason: `holds at most ${max} items, got ${value.length}`,
      })
    if (value.length < min)
      throw new FieldError({
        code: min === 1 ? 'FIELD_REQUIRED' : 'FIELD_INVALID',
        field,
        reason: `needs at least ${min} item${min === 1 ? '' : 's'}`,
      })
    return value.map((entry, index) => item(entry, `${field}[${index}]`))
  }

  optArray<T>(
    name: string,
    item: (value: unknown, field: string) => T,
    options?: { min?: number; max?: number },
  ): T[] | undefined {
    return this.has(name) ? this.array(name, item, options) : undefined
  }

  /** An array of non-empty strings without duplicates. */
  ids(name: string, options: { min?: number; max?: number } = {}): string[] {
    const ids = this.array(name, stringItem, options)
    const duplicate = ids.find((id, index) => ids.indexOf(id) !== index)
    if (duplicate !== undefined)
      throw new FieldError({ field: this.field(name), reason: `lists ${duplicate} twice` })
    return ids
  }
}

/** Item reader for arrays of non-empty strings. */
export function stringItem(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new FieldError({ field, reason: 'must be a non-empty string' })
  if (value.length > MAX_STRING)
    throw new FieldError({
      code: 'PAYLOAD_TOO_LARGE',
      field,
      reason: `must be at most ${MAX_STRING} characters`,
    })
  return value
}

/** Item reader for arrays of objects. */
export const objectItem = (value: unknown, field: string) => new Reader(value, field)
