import { utf8ToBytes } from '@noble/hashes/utils.js'
import { describe, expect, it } from 'vitest'
import { FieldError } from '../kernel/base/errors.ts'
import { MAX_JSON_DEPTH, parseJsonObject } from './readJson.ts'

/** `{"parameters":{"list":[{"a":[{"a":…0…}]}]}}`, `levels` objects and arrays deep in all. */
function nested(levels: number): string {
  let inner = '0'
  for (let level = levels; level > 2; level--) inner = level % 2 ? `{"a":${inner}}` : `[${inner}]`
  return `{"type":"t","parameters":{"list":${inner}},"after":[1,[2]]}`
}

describe('parseJsonObject', () => {
  it(`takes a body ${MAX_JSON_DEPTH} levels deep and refuses one deeper, naming where`, () => {
    expect(parseJsonObject(utf8ToBytes(nested(MAX_JSON_DEPTH)))).toMatchObject({ type: 't' })
    let refusal: unknown
    try {
      parseJsonObject(utf8ToBytes(nested(MAX_JSON_DEPTH + 1)))
    } catch (error) {
      refusal = error
    }
    expect(refusal).toBeInstanceOf(FieldError)
    const path = `parameters.list${'.a[0]'.repeat((MAX_JSON_DEPTH - 2) / 2)}`
    expect((refusal as FieldError).toBody()).toMatchObject({
      details: { field: path },
    })
    expect((refusal as Error).message).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`)
  })

  it('refuses what is not a JSON object, saying what it is', () => {
    expect(() => parseJsonObject(utf8ToBytes('[1]'))).toThrow('request body must be a JSON object, got array')
    expect(() => parseJsonObject(utf8ToBytes('{"a":'))).toThrow('request body is not valid JSON')
  })
})
