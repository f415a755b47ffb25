// IndexedDB for the client's key store when tests run in Node.
import 'fake-indexeddb/auto'
import { afterAll, afterEach, beforeEach } from 'vitest'
import {
  closeOpenedSince,
  closeOpenServices,
  openNow,
} from '../../packages/service/src/assembly/openServices.ts'

// Each test's services end with the test, and each file's with the file: none keeps polling under
// the tests after it (`openServices.ts`). A service a `beforeAll` made stays for the file.
let before: ReadonlySet<unknown> = new Set()
beforeEach(() => {
  before = openNow()
})
afterEach(() => closeOpenedSince(before))
afterAll(() => closeOpenServices())
