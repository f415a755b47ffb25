import react from '@vitejs/plugin-react'
import { defineConfig } from 'vitest/config'
import { workspaceAliases } from './scripts/workspaceAliases.mjs'

export default defineConfig({
  plugins: [react()],
  resolve: { alias: workspaceAliases },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['packages/*/src/**/*.test.ts', 'src/core/**/*.test.ts'],
          setupFiles: ['./src/test/setup.node.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'dom',
          environment: 'happy-dom',
          include: ['src/react/**/*.test.{ts,tsx}', 'src/components/**/*.test.{ts,tsx}', 'src/*.test.ts'],
          setupFiles: ['./src/test/setup.dom.ts'],
        },
      },
    ],
  },
})
