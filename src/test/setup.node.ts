// IndexedDB for the client's key store when tests run in Node.
import 'fake-indexeddb/auto'
import { afterAll } from 'vitest'
import { closeOpenServices } from '../../packages/service/src/assembly/openServices.ts'

// Each file's services end with the file: none keeps polling under the next files of its worker
// (`openServices.ts`).
afterAll(() => closeOpenServices())
