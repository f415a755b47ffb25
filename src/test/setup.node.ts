// IndexedDB for the client's key store when tests run in Node.
import 'fake-indexeddb/auto'
import { closeServicesAfterTests } from './closeServices.ts'

closeServicesAfterTests()
