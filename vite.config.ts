import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config'
import { workspaceAliases } from './scripts/workspaceAliases.mjs'

// React 18.3 lives in its own folder (scripts/react18: react-dom 18's peer range cannot sit beside the
// root's React 19). The `dom-react18` project runs the component tests against it: `react` and
// `react-dom` resolve there, and the libraries that import React are inlined so they see the same copy.
const react18 = fileURLToPath(new URL('./scripts/react18/node_modules/', import.meta.url))
const react18Aliases = [
  { find: /^react(\/.*)?$/, replacement: `${react18}react$1` },
  { find: /^react-dom(\/.*)?$/, replacement: `${react18}react-dom$1` },
  // Its `main` is CommonJS, which Node would load with the root's React 19: take the ES build.
  {
    find: /^@testing-library\/react$/,
    replacement: fileURLToPath(
      new URL('./node_modules/@testing-library/react/dist/@testing-library/react.esm.js', import.meta.url),
    ),
  },
]
// The kit's own entry points, to its sources: without these, `latchkey` resolves to the built
// dist/ by package self-reference, and a story or test importing both `latchkey` and a source file
// would hold two copies of every React context (Storybook reads this config too).
const kitAliases = [
  { find: /^latchkey$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
  {
    find: /^latchkey\/viem\/react$/,
    replacement: fileURLToPath(new URL('./src/viem/react.ts', import.meta.url)),
  },
  {
    find: /^latchkey\/wagmi\/core$/,
    replacement: fileURLToPath(new URL('./src/wagmi/core.ts', import.meta.url)),
  },
  {
    find: /^latchkey\/(core|solana|wagmi|viem|ethers)$/,
    replacement: fileURLToPath(new URL('./src/$1/index.ts', import.meta.url)),
  },
  {
    find: /^latchkey\/styles\.css$/,
    replacement: fileURLToPath(new URL('./src/components/styles.css', import.meta.url)),
  },
]
const domTests = ['src/react/**/*.test.{ts,tsx}', 'src/components/**/*.test.{ts,tsx}', 'src/*.test.ts']
const nodeTests = [
  'packages/*/src/**/*.test.ts',
  'packages/service/test/**/*.test.ts',
  'src/core/**/*.test.ts',
  'src/{viem,ethers,solana,wagmi}/**/*.test.ts',
  'scripts/*.test.ts',
  // issue 40
  'examples/migrate/*.test.ts',
]
// The Node tests that need a process and module registry of their own: `vi.mock` of a module the
// others may have loaded already (toyActivity's `@latchkey/protocol`, viem's server entry's
// `react`); the process's memory measured across a flood (abuse, pipeline: after other files in
// one process, abuse's second flood grew the RSS by 122 MB against the 96 MB it allows).
const isolatedNodeTests = [
  'packages/service/src/activities/toyActivity.test.ts',
  'src/viem/server.test.ts',
  'packages/service/src/security/abuse.test.ts',
  'packages/service/src/pipeline/pipeline.test.ts',
  'packages/service/test/policies/dryRunBudget.test.ts',
  'packages/service/test/mfa/conditionBudget.test.ts',
  'packages/service/test/policies/policyExpressionCharacters.test.ts',
]

// The component tests that need a module registry of their own: useUi's first Spanish render
// suspends only while no other file has loaded the Spanish dictionary.
const isolatedDomTests = ['src/components/ui/useUi.test.tsx']

/**
 * A test project, as two. Most files share their worker's module registry: what they import loads
 * once per worker instead of once per file (2026-12-02: the Node files took 516 s of wall time so
 * against 757 s, import 47 s against 316 s; the component files 78 s against 215 s). The files of
 * `isolated` get a registry each, in `<name>-isolated`. Every file still makes its own services,
 * databases, clients and DOM.
 */
function withIsolated({
  name,
  environment,
  resolve,
  include,
  exclude = [],
  isolated,
  setupFiles,
  server,
}: {
  name: string
  environment: 'node' | 'happy-dom'
  resolve?: { alias: typeof kitAliases }
  include: string[]
  exclude?: string[]
  isolated: string[]
  setupFiles: string[]
  server?: { deps: { inline: RegExp[] } }
}): TestProjectInlineConfiguration[] {
  const common = { environment, setupFiles, ...(server ? { server } : {}) }
  return [
    {
      extends: true as const,
      ...(resolve ? { resolve } : {}),
      test: { name, include, exclude: [...exclude, ...isolated], isolate: false, ...common },
    },
    {
      extends: true as const,
      ...(resolve ? { resolve } : {}),
      test: {
        name: `${name}-isolated`,
        include: isolated.filter((file) => !exclude.includes(file)),
        ...common,
      },
    },
  ]
}

export default defineConfig({
  plugins: [react()],
  resolve: { alias: [...kitAliases, ...workspaceAliases] },
  test: {
    // Vitest's default is one worker per core less one: a single worker on a 2-core machine, while
    // most service tests wait on child processes, PostgreSQL or anvil rather than compute.
    maxWorkers: 2,
    // The throwaway PostgreSQL clusters (scripts/postgres.mjs) run without fsync: a commit still
    // reaches the operating system before it answers, so no test's kill -9 or server crash loses
    // it; the benches keep fsync on.
    env: { LATCHKEY_PG_FSYNC: 'off' },
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      ...withIsolated({
        name: 'node',
        environment: 'node',
        include: nodeTests,
        isolated: isolatedNodeTests,
        setupFiles: ['./src/test/setup.node.ts'],
      }),
      ...withIsolated({
        name: 'dom',
        environment: 'happy-dom',
        isolated: isolatedDomTests,
        // The adapters' React parts run on React 19 only (wagmi's own hooks are not aliased to 18).
        include: [...domTests, 'src/{viem,wagmi}/**/*.test.tsx', 'playground/src/**/*.test.{ts,tsx}'],
        setupFiles: ['./src/test/setup.dom.ts'],
      }),
      ...withIsolated({
        name: 'dom-react18',
        environment: 'happy-dom',
        isolated: isolatedDomTests,
        resolve: { alias: [...react18Aliases, ...kitAliases, ...workspaceAliases] },
        include: domTests,
        exclude: ['src/exports.test.ts'],
        setupFiles: ['./src/test/setup.dom.ts', './src/test/setup.react18.ts'],
        server: { deps: { inline: [/@testing-library\/react/, /@tanstack\/react-query/, /zustand/] } },
      }),
    ],
  },
})
