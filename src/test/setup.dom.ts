import 'fake-indexeddb/auto'
import { cleanup } from '@testing-library/react'
import { afterAll, afterEach, beforeEach } from 'vitest'
import {
  closeOpenedSince,
  closeOpenServices,
  openNow,
} from '../../packages/service/src/assembly/openServices.ts'

// Each test's services end with the test, and each file's with the file (`openServices.ts`); a
// service a `beforeAll` made stays for the file. Closed after the components are unmounted (after
// hooks run last-registered first).
let before: ReadonlySet<unknown> = new Set()
beforeEach(() => {
  before = openNow()
})
afterEach(() => closeOpenedSince(before))
afterEach(() => cleanup())
afterAll(() => closeOpenServices())
