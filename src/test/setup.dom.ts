import 'fake-indexeddb/auto'
import { cleanup } from '@testing-library/react'
import { afterEach } from 'vitest'
import { closeServicesAfterTests } from './closeServices.ts'

// The services close after the components are unmounted (after hooks run last-registered first).
closeServicesAfterTests()
afterEach(() => cleanup())
