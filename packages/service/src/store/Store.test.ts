import { describe, expect, it } from 'vitest'
import type { Op } from './model.ts'
import { Store } from './Store.ts'

const user = (id: string, organizationId: string, userName = id) => ({
  id,
  organizationId,
  userName,
  createdAt: 1,
  updatedAt: 1,
})

describe('Store', () => {
  it('commits a transaction only when it resolves, durably before visibly', async () => {
    const appended: Op[][] = []
    const store = new Store({ load: () => undefined, append: (ops) => void appended.push(ops) })
    await store.transaction((tx) => {
      tx.put('users', user('u1', 'o1'))
    })
    await expect(
      store.transaction((tx) => {
        tx.put('users', user('u2', 'o1'))
        throw new Error('half-way')
      }),
    ).rejects.toThrow('half-way')
    expect(store.all('users').map((row) => row.id)).toEqual(['u1'])
    expect(appended).toEqual([[['users', 'u1', user('u1', 'o1')]]])
  })

  it('reads its own draft through indexes, including moves and deletes', async () => {
    const store = new Store()
    await store.transaction((tx) => {
      tx.put('users', user('a', 'o1'))
      tx.put('users', user('b', 'o1'))
    })
    await store.transaction((tx) => {
      tx.put('users', user('a', 'o2'))
      tx.delete('users', 'b')
      tx.put('users', user('c', 'o1'))
      expect(tx.findBy('users', 'organizationId', 'o1').map((row) => row.id)).toEqual(['c'])
      expect(tx.findBy('users', 'organizationId', 'o2').map((row) => row.id)).toEqual(['a'])
      expect(store.findBy('users', 'organizationId', 'o1').map((row) => row.id)).toEqual(['a', 'b'])
      const savepoint = tx.savepoint()
      tx.put('users', user('d', 'o1'))
      tx.rollbackTo(savepoint)
      expect(tx.all('users').map((row) => row.id)).toEqual(['a', 'c'])
    })
    expect(store.findBy('users', 'organizationId', 'o1').map((row) => row.id)).toEqual(['c'])
    expect(() => store.findBy('users', 'userName' as 'organizationId', 'x')).toThrow(/no index/)
  })

  it('freezes stored rows so handlers cannot change state behind the transaction', async () => {
    const store = new Store()
    await store.transaction((tx) => {
      tx.put('organizations', {
        id: 'o',
        name: 'O',
        rootUserIds: ['u'],
        rootQuorumThreshold: 1,
        createdAt: 1,
        updatedAt: 1,
      })
    })
    const row = store.get('organizations', 'o')!
    expect(() => row.rootUserIds.push('intruder')).toThrow(TypeError)
  })

  it('runs transactions one at a time', async () => {
    const store = new Store()
    const order: string[] = []
    const slow = store.transaction(async () => {
      order.push('slow start')
      await new Promise((resolve) => setTimeout(resolve, 5))
      order.push('slow end')
    })
    const fast = store.transaction(() => {
      order.push('fast')
    })
    await Promise.all([slow, fast])
    expect(order).toEqual(['slow start', 'slow end', 'fast'])
  })
})
