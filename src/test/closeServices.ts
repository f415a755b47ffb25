import { afterAll, afterEach, beforeEach } from 'vitest'
import {
  closeOpenedSince,
  closeOpenServices,
  openNow,
} from '../../packages/service/src/assembly/openServices.ts'

/**
 * Registers the hooks that close each test's services after the test and each file's after the
 * file: none keeps polling under the tests after it (`openServices.ts`). A service a `beforeAll`
 * made stays for its file. After hooks run last-registered first: register this before a hook
 * that must run before the services close (unmounting components).
 */
export function closeServicesAfterTests(): void {
  let before: ReadonlySet<unknown> = new Set()
  beforeEach(() => {
    before = openNow()
  })
  afterEach(() => closeOpenedSince(before))
  afterAll(() => closeOpenServices())
}
