import { describe, expect, it } from 'vitest'
import { KeyedQueue } from './keyedQueue.ts'

const tick = () => new Promise((resolve) => setTimeout(resolve, 1))

describe('KeyedQueue', () => {
  it('runs one key’s tasks one at a time in order, other keys at once, and forgets idle keys', async () => {
    const queue = new KeyedQueue()
    const log: string[] = []
    let running = 0
    let most = 0
    const task = (name: string) => async () => {
      running++
      most = Math.max(most, running)
      log.push(`start ${name}`)
      await tick()
      log.push(`end ${name}`)
      running--
      return name
    }
    const same = Promise.all([
      queue.run('a', task('a1')),
      queue.run('a', task('a2')),
      queue.run('a', task('a3')),
    ])
    const other = queue.run('b', task('b1'))
    expect(await same).toEqual(['a1', 'a2', 'a3'])
    expect(await other).toBe('b1')
    const a = log.filter((line) => line.endsWith('a1') || line.endsWith('a2') || line.endsWith('a3'))
    expect(a).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3'])
    expect(most).toBe(2)
    await tick()
    expect(queue.size).toBe(0)
  })

  it('a failed task passes its error to its caller and does not stop the next', async () => {
    const queue = new KeyedQueue()
    const failed = queue.run('a', async () => {
      throw new Error('no')
    })
    const next = queue.run('a', async () => 'yes')
    await expect(failed).rejects.toThrow('no')
    expect(await next).toBe('yes')
  })

  it('runAll takes keys in sorted order, so crossing key sets never wait on each other', async () => {
    const queue = new KeyedQueue()
    const order: string[] = []
    const both = await Promise.all([
      queue.runAll(['y', 'x'], async () => {
        order.push('first')
        await tick()
        return 1
      }),
      queue.runAll(['x', 'y'], async () => {
        order.push('second')
        return 2
      }),
      queue.runAll(['z'], async () => {
        order.push('z')
        return 3
      }),
    ])
    expect(both).toEqual([1, 2, 3])
    expect(order.indexOf('first')).toBeLessThan(order.indexOf('second'))
  })
})
