import { describe, expect, it, vi } from 'vitest'
import { createService } from './createService.ts'
import { closeOpenedSince, closeOpenServices, openNow } from './openServices.ts'

const realWait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('openServices', () => {
  it('closes the services left open, each once, and none a test already closed', async () => {
    const [closedByHand, leftOpen] = [await createService(), await createService()]
    const closes = [closedByHand, leftOpen].map((service) => vi.spyOn(service.runtime.store, 'close'))
    await closedByHand.close()
    await closeOpenServices()
    expect(closes.map((spy) => spy.mock.calls.length)).toEqual([1, 1])
    // Closing again (a test's own afterAll after the setup's) waits for the close that ran.
    await Promise.all([leftOpen.close(), closedByHand.close()])
    expect(closes.map((spy) => spy.mock.calls.length)).toEqual([1, 1])
  })

  it("a service left open stops polling for jobs, so no later file's faked clock has to run its polls", async () => {
    const service = await createService()
    const polls = vi.spyOn(service.runtime.jobs, 'runDue')
    // The job worker looks every 500 ms while the service is open...
    await realWait(1_100)
    expect(polls.mock.calls.length).toBeGreaterThan(0)
    await closeOpenServices()
    polls.mockClear()
    // ...and never once closed.
    await realWait(1_100)
    expect(polls).not.toHaveBeenCalled()
  })

  it('closes what was opened since a mark (a test) and leaves what was open before it (its file)', async () => {
    const before = await createService()
    const mark = openNow()
    const during = await createService()
    const closes = [before, during].map((service) => vi.spyOn(service.runtime.store, 'close'))
    await closeOpenedSince(mark)
    expect(closes.map((spy) => spy.mock.calls.length)).toEqual([0, 1])
    await before.close()
    expect(closes.map((spy) => spy.mock.calls.length)).toEqual([1, 1])
  })
})
