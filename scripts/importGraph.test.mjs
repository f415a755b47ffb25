// The import-graph check on made-up graphs, so that `npm run graph` cannot pass by finding nothing:
// it must name a circle, an upward import between the kit's layers, one into the service, the
// service's kernel importing a wing, a wing importing another wing, the API importing a wing and the
// pipeline importing a handler, and stay quiet on a clean graph and on tests; and it must find a
// loop between the service's folders.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkGraph, describeFindings, serviceFolders } from './importGraph.mjs'

const graphOf = (edges) => {
  const graph = new Map()
  for (const [from, to] of edges) {
    if (!graph.has(from)) graph.set(from, new Set())
    if (!graph.has(to)) graph.set(to, new Set())
    graph.get(from).add(to)
  }
  return graph
}

/** A graph that keeps every rule: components → react → core → protocol ← service. */
const clean = [
  ['src/components/auth/Login.tsx', 'src/react/hooks/useLogin.ts'],
  ['src/react/hooks/useLogin.ts', 'src/core/actions/login.ts'],
  ['src/core/actions/login.ts', 'packages/protocol/src/index.ts'],
  ['src/viem/react.ts', 'src/react/hooks/useLogin.ts'],
  ['src/wagmi/index.ts', 'src/viem/provider.ts'],
  ['src/index.ts', 'src/components/auth/Login.tsx'],
  // The service: shell → wings → API → kernel → protocol.
  ['packages/service/src/assembly/createService.ts', 'packages/service/src/signin/signInWing.ts'],
  ['packages/service/src/signin/otpLogin.ts', 'packages/service/src/pipeline/submitActivity.ts'],
  ['packages/service/src/signin/otpLogin.ts', 'packages/service/src/kernel/otpDelivery.ts'],
  ['packages/service/src/delivery/deliveryWing.ts', 'packages/service/src/kernel/otpDelivery.ts'],
  ['packages/service/src/activities/createWallet.ts', 'packages/service/src/domain/wallets.ts'],
  ['packages/service/src/pipeline/submitActivity.ts', 'packages/service/src/kernel/registry.ts'],
  ['packages/service/src/kernel/registry.ts', 'packages/protocol/src/index.ts'],
  ['packages/service/src/kernel/Runtime.ts', 'packages/service/src/kernel/store/Store.ts'],
  // Tests may cross layers: the kit's run against the real service.
  ['src/core/actions/login.test.ts', 'packages/service/src/testing/index.ts'],
]

test('a clean graph has no finding', () => {
  assert.deepEqual(checkGraph(graphOf(clean)), { cycles: [], upward: [] })
})

test('a circle and upward imports are all reported, each naming its files', () => {
  const findings = checkGraph(
    graphOf([
      ...clean,
      ['packages/protocol/src/activities.ts', 'packages/protocol/src/proxy.ts'],
      ['packages/protocol/src/proxy.ts', 'packages/protocol/src/enums.ts'],
      ['packages/protocol/src/enums.ts', 'packages/protocol/src/activities.ts'],
      ['src/core/createLatchkey.ts', 'src/react/context.ts'],
      ['src/react/context.ts', 'src/components/ui/Dialog.tsx'],
      ['src/solana/index.ts', 'src/react/hooks/useLogin.ts'],
      ['packages/protocol/src/index.ts', 'src/core/types.ts'],
      ['src/core/types.ts', 'packages/service/src/kernel/base/errors.ts'],
      ['packages/service/src/kernel/base/errors.ts', 'src/core/errors.ts'],
      ['packages/service/src/pipeline/submitActivity.ts', 'packages/service/src/signin/otpLogin.ts'],
      ['packages/service/src/pipeline/runQuery.ts', 'packages/service/src/assembly/builtinWings.ts'],
      ['packages/service/src/pipeline/submitActivity.ts', 'packages/service/src/activities/createWallet.ts'],
      // A made-up kernel → wing import, a wing importing another wing, the API importing a wing.
      ['packages/service/src/kernel/Runtime.ts', 'packages/service/src/sending/SendingOptions.ts'],
      ['packages/service/src/signin/otp/otpStorage.ts', 'packages/service/src/delivery/deliveryWing.ts'],
      ['packages/service/src/queries/index.ts', 'packages/service/src/sending/sendQueries.ts'],
    ]),
  )
  assert.deepEqual(findings.cycles, [
    {
      files: [
        'packages/protocol/src/activities.ts',
        'packages/protocol/src/enums.ts',
        'packages/protocol/src/proxy.ts',
      ],
      walk: [
        'packages/protocol/src/activities.ts',
        'packages/protocol/src/proxy.ts',
        'packages/protocol/src/enums.ts',
        'packages/protocol/src/activities.ts',
      ],
    },
    // The pipeline → sign-in edge closes a second circle with the sign-in wing's own import.
    {
      files: ['packages/service/src/pipeline/submitActivity.ts', 'packages/service/src/signin/otpLogin.ts'],
      walk: [
        'packages/service/src/pipeline/submitActivity.ts',
        'packages/service/src/signin/otpLogin.ts',
        'packages/service/src/pipeline/submitActivity.ts',
      ],
    },
  ])
  assert.deepEqual(findings.upward.map(({ from, to, why }) => `${from} → ${to}: ${why}`).sort(), [
    'packages/protocol/src/index.ts → src/core/types.ts: protocol may not import core',
    'packages/service/src/kernel/Runtime.ts → packages/service/src/sending/SendingOptions.ts: service kernel may not import service wing',
    'packages/service/src/kernel/base/errors.ts → src/core/errors.ts: service kernel may not import core',
    'packages/service/src/pipeline/runQuery.ts → packages/service/src/assembly/builtinWings.ts: service api may not import service shell',
    'packages/service/src/pipeline/submitActivity.ts → packages/service/src/activities/createWallet.ts: the pipeline may not import the handlers it runs (activities/)',
    'packages/service/src/pipeline/submitActivity.ts → packages/service/src/signin/otpLogin.ts: service api may not import service wing',
    'packages/service/src/queries/index.ts → packages/service/src/sending/sendQueries.ts: service api may not import service wing',
    'packages/service/src/signin/otp/otpStorage.ts → packages/service/src/delivery/deliveryWing.ts: a wing may not import another wing (signin/ → delivery/): put what they share in kernel/',
    'src/core/createLatchkey.ts → src/react/context.ts: core may not import react',
    'src/core/types.ts → packages/service/src/kernel/base/errors.ts: core may not import service kernel',
    'src/react/context.ts → src/components/ui/Dialog.tsx: react may not import components',
    'src/solana/index.ts → src/react/hooks/useLogin.ts: adapter may not import react',
  ])
  const lines = describeFindings(findings)
  assert.equal(lines.length, 2 + 12)
  assert.match(lines[0], /^import circle: packages\/protocol\/src\/activities\.ts → /)
})

test('a file importing itself is a circle; an allowed edge is let through, and only that one', () => {
  const graph = graphOf([
    ['src/core/a.ts', 'src/core/a.ts'],
    ['src/core/b.ts', 'src/react/c.ts'],
    ['src/core/d.ts', 'src/react/c.ts'],
  ])
  const findings = checkGraph(graph, { allowed: { 'src/core/b.ts -> src/react/c.ts': 'why' } })
  assert.deepEqual(findings.cycles, [{ files: ['src/core/a.ts'], walk: ['src/core/a.ts', 'src/core/a.ts'] }])
  assert.deepEqual(findings.upward, [
    { from: 'src/core/d.ts', to: 'src/react/c.ts', why: 'core may not import react' },
  ])
})

test("a loop between the service's folders is found, and its imports counted; a clean graph has none", () => {
  const clean = serviceFolders(
    graphOf([
      ['packages/service/src/assembly/createService.ts', 'packages/service/src/signin/signInWing.ts'],
      ['packages/service/src/signin/signInWing.ts', 'packages/service/src/pipeline/admit.ts'],
      ['packages/service/src/pipeline/admit.ts', 'packages/service/src/kernel/Runtime.ts'],
      ['packages/service/src/kernel/Runtime.ts', 'packages/service/src/kernel/store/Store.ts'],
      ['packages/service/src/cli.ts', 'packages/service/src/assembly/createService.ts'],
    ]),
  )
  assert.deepEqual(clean, { units: 5, levels: 5, loops: [], loopImports: 0 })
  const looped = serviceFolders(
    graphOf([
      ['packages/service/src/assembly/createService.ts', 'packages/service/src/signin/signInWing.ts'],
      ['packages/service/src/signin/signInWing.ts', 'packages/service/src/kernel/Runtime.ts'],
      ['packages/service/src/kernel/Runtime.ts', 'packages/service/src/signin/captcha/CaptchaOptions.ts'],
      // Tests are left out: this one cannot close a loop.
      ['packages/service/src/kernel/Runtime.test.ts', 'packages/service/src/assembly/createService.ts'],
    ]),
  )
  assert.deepEqual(looped.loops, [['kernel', 'signin']])
  assert.equal(looped.loopImports, 2)
  assert.equal(looped.levels, 2)
})
