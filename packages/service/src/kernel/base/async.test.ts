import { afterEach, describe, expect, it, vi } from 'vitest'
import { lookEvery } from './async.ts'

afterEach(() => {
  vi.useRealTimers()
})

describe('lookEvery', () => {
  it('looks now and every interval after a look ends, one at a time; a look that rejects still schedules the next; stop ends it', async () => {
    vi.useFakeTimers()
    let looks = 0
    let release: (() => void) | undefined
    const look = () => {
      looks++
      // The first look fails, the second hangs until released, the rest resolve.
      if (looks === 1) return Promise.reject(new Error('database away'))
      if (looks === 2) return new Promise<void>((resolve) => (release = resolve))
      return Promise.resolve()
    }
    const watch = lookEvery(1_000, look)
    expect(looks).toBe(1)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(looks).toBe(2)
    // A refresh while the second look hangs waits for it instead of starting a third.
    const waiting = watch.refresh()
    await vi.advanceTimersByTimeAsync(5_000)
    expect(looks).toBe(2)
    release!()
    await waiting
    await vi.advanceTimersByTimeAsync(1_000)
    expect(looks).toBe(3)
    watch.stop()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(looks).toBe(3)
  })
})
