import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vitest/config'
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
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: [
            'packages/*/src/**/*.test.ts',
            'packages/service/test/**/*.test.ts',
            'src/core/**/*.test.ts',
            'src/{viem,ethers,solana,wagmi}/**/*.test.ts',
            'scripts/*.test.ts',
            // issue 40
            'examples/migrate/*.test.ts',
          ],
          setupFiles: ['./src/test/setup.node.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'dom',
          environment: 'happy-dom',
          // The adapters' React parts run on React 19 only (wagmi's own hooks are not aliased to 18).
          include: [...domTests, 'src/{viem,wagmi}/**/*.test.tsx', 'playground/src/**/*.test.{ts,tsx}'],
          setupFiles: ['./src/test/setup.dom.ts'],
        },
      },
      {
        extends: true,
        resolve: { alias: [...react18Aliases, ...kitAliases, ...workspaceAliases] },
        test: {
          name: 'dom-react18',
          environment: 'happy-dom',
          include: domTests,
          exclude: ['src/exports.test.ts'],
          setupFiles: ['./src/test/setup.dom.ts', './src/test/setup.react18.ts'],
          server: { deps: { inline: [/@testing-library\/react/, /@tanstack\/react-query/, /zustand/] } },
        },
      },
    ],
  },
})
