/**
 * Bad input: every activity the service registers, fuzzed field by field with type-confused and
 * hostile values. The standard: bad input gets a 4xx naming the field, never a 500. Fields are
 * discovered from the service's own errors (FIELD_REQUIRED / FIELD_INVALID name them, ENUM_INVALID
 * lists the choices), so the loop walks each activity's parameters, nested ones included.
 * Bounded: at most MAX_STEPS fields per activity and one pass over VALUES per field.
 */
import { ACTIVITIES, type ActivityPath } from '@latchkey/protocol'
import { describe, expect, it } from 'vitest'
import { createHarness, ETHEREUM_ACCOUNT, type Json, resultOf, testKey } from '../../src/testing/harness.ts'

const MAX_STEPS = 12

const HOSTILE: [string, unknown][] = [
  ['null', null],
  ['true', true],
  ['0', 0],
  ['-1', -1],
  ['1.5', 1.5],
  ['1e308', 1e308],
  ['2^64 (number)', 2 ** 64],
  ['""', ''],
  ['" "', ' '],
  ['10 kB string', 'x'.repeat(10_000)],
  ['non-hex', '0xzz'],
  ['zero-width/RTL', '\u200b\u202e\ufeffa'],
  ['"-1"', '-1'],
  ['80-digit string', '9'.repeat(80)],
  ['"1e400"', '1e400'],
  ['[]', []],
  ['[null]', [null]],
  ['[1,1]', [1, 1]],
  ['["a","a"]', ['a', 'a']],
  ['{}', {}],
  ['{__proto__}', JSON.parse('{"__proto__":{"polluted":1}}')],
  ['"__proto__"', '__proto__'],
  ['"constructor"', 'constructor'],
  ['"toString"', 'toString'],
]

/** Sets `value` at a field path such as `accounts[0].curve` (relative to `parameters`). */
function setAt(root: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(root)
  const keys = path.match(/[^.[\]]+/g) ?? []
  let node: Json = copy
  keys.forEach((key, i) => {
    const last = i === keys.length - 1
    const k: string | number = /^\d+$/.test(key) ? Number(key) : key
    if (last) node[k] = value
    else {
      if (node[k] === null || typeof node[k] !== 'object') node[k] = /^\d+$/.test(keys[i + 1]!) ? [] : {}
      node = node[k]
    }
  })
  return copy
}

interface Finding {
  path: string
  field: string
  value: string
  status: number
  body: string
}

describe('fuzzing every activity with hostile parameters', () => {
  it('answers no 5xx and names the field of every refusal', async () => {
    const findings: Finding[] = []
    const unnamed: string[] = []
    let requests = 0
    const paths = Object.keys(ACTIVITIES) as ActivityPath[]
    for (const path of paths) {
      const h = await createHarness()
      if (!h.service.registry.activities.has(path)) continue
      // Ids of things that exist, so discovery can get past lookups.
      const { walletId, addresses } = resultOf(
        'create_wallet',
        await h.submit('create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] }),
      )
      const spare = testKey()
      const {
        userIds: [userId],
      } = resultOf(
        'create_users',
        await h.submit('create_users', {
          users: [
            { userName: 'spare', apiKeys: [spare.apiKey('k')], authenticators: [], oauthProviders: [] },
          ],
        }),
      )
      const {
        policyIds: [policyId],
      } = resultOf(
        'create_policies',
        await h.submit('create_policies', {
          policies: [{ policyName: 'p', effect: 'EFFECT_DENY', condition: "activity.type == 'nothing'" }],
        }),
      )
      const ids: [string, unknown][] = [
        ['walletId', walletId],
        ['userId', userId],
        ['policyId', policyId],
        ['address', addresses[0]],
        ['[walletId]', [walletId]],
        ['[userId]', [userId]],
      ]
      const benign: [string, unknown][] = [
        ['"abc"', 'abc'],
        ['hex32', `0x${'ab'.repeat(32)}`],
        ['"1"', '1'],
        ['1', 1],
        ['true', true],
        ['[{}]', [{}]],
        ['{}', {}],
        ['["abc"]', ['abc']],
        ['[]', []],
        ['account', ETHEREUM_ACCOUNT],
        ['[account]', [ETHEREUM_ACCOUNT]],
      ]
      let params: Record<string, unknown> = {}
      const send = async (parameters: Record<string, unknown>) => {
        requests++
        h.clock.advance(1)
        return h.submit(path, parameters)
      }
      const describeValue = (name: string) => name
      let reply = await send(params)
      const tried = new Set<string>()
      for (let step = 0; step < MAX_STEPS; step++) {
        if (reply.status >= 500)
          findings.push({
            path,
            field: '(as built so far)',
            value: JSON.stringify(params).slice(0, 120),
            status: reply.status,
            body: JSON.stringify(reply.body).slice(0, 200),
          })
        const field: unknown = reply.body?.details?.field
        if (reply.status === 200 || typeof field !== 'string' || !field.startsWith('parameters.')) break
        const name = field.slice('parameters.'.length)
        if (tried.has(name)) break
        tried.add(name)
        const enumChoice = /must be one of ([A-Z0-9_]+)/.exec(String(reply.body?.message))?.[1]
        const candidates: [string, unknown][] = [
          ...(enumChoice ? ([[`enum ${enumChoice}`, enumChoice]] as [string, unknown][]) : []),
          ...ids,
          ...benign,
        ]
        let next: { params: Record<string, unknown>; reply: typeof reply } | undefined
        for (const [label, value] of [...HOSTILE, ...candidates]) {
          const attempt = setAt(params, name, value)
          const answer = await send(attempt)
          if (answer.status >= 500)
            findings.push({
              path,
              field,
              value: describeValue(label),
              status: answer.status,
              body: JSON.stringify(answer.body).slice(0, 200),
            })
          else if (
            answer.status >= 400 &&
            answer.status !== 404 &&
            answer.status !== 409 &&
            answer.body?.details?.field === undefined
          )
            unnamed.push(
              `${path} ${field}=${label}: ${answer.status} ${String(answer.body?.message).slice(0, 120)}`,
            )
          const movedOn =
            answer.status === 200 || (answer.status < 500 && answer.body?.details?.field !== field)
          // Prefer an acceptable benign value to carry on with.
          if (movedOn && candidates.some(([l]) => l === label) && next === undefined)
            next = { params: attempt, reply: answer }
        }
        if (!next) break
        params = next.params
        reply = next.reply
      }
      await h.service.close?.()
    }
    console.log(`${requests} requests over ${paths.length} activity types`)
    console.log(
      `5xx answers (${findings.length}):\n${findings.map((f) => `${f.path} ${f.field} = ${f.value}: ${f.status} ${f.body}`).join('\n')}`,
    )
    console.log(
      `4xx not naming a field (${unnamed.length}):\n${[...new Set(unnamed)].slice(0, 60).join('\n')}`,
    )
    expect(findings).toEqual([])
  }, 600_000)
})

describe('fuzzing every query with hostile bodies', () => {
  it('answers no 5xx', async () => {
    const h = await createHarness()
    const { walletId } = resultOf(
      'create_wallet',
      await h.submit('create_wallet', { walletName: 'w', accounts: [ETHEREUM_ACCOUNT] }),
    )
    const findings: string[] = []
    let requests = 0
    const fields = [
      'walletId',
      'userId',
      'activityId',
      'policyId',
      'privateKeyId',
      'authenticatorId',
      'filterType',
      'filterValue',
      'paginationOptions',
      'paginationOptions.limit',
      'paginationOptions.before',
      'paginationOptions.after',
      'includeWalletDetails',
      'filterByStatus',
      'filterByType',
      'address',
      'addresses',
      'caip2',
      'sendTransactionStatusId',
      'nonceType',
      'organizationId',
      'timestampMs',
      'spendingLimitId',
      'endpointId',
    ]
    for (const path of h.service.registry.queries.keys()) {
      for (const field of fields)
        for (const [label, value] of HOSTILE) {
          requests++
          h.clock.advance(1)
          const body = setAt({ walletId }, field, value)
          const reply = await h.query(path, body)
          if (reply.status >= 500)
            findings.push(
              `${path} ${field}=${label}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 160)}`,
            )
        }
    }
    console.log(`${requests} query requests; 5xx: ${findings.length}\n${findings.join('\n')}`)
    expect(findings).toEqual([])
  }, 600_000)
})
