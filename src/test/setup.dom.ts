import 'fake-indexeddb/auto'
import { cleanup } from '@testing-library/react'
import { afterAll, afterEach } from 'vitest'
import { closeOpenServices } from '../../packages/service/src/assembly/openServices.ts'

afterEach(() => cleanup())
// Each file's services end with the file (`openServices.ts`).
afterAll(() => closeOpenServices())
