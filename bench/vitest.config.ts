// `npm run bench:render`: and `npm run bench:flows`: run bench/render.tsx and bench/flows.ts once in happy-dom. Kept apart from the
// project's vite.config.ts so the benchmark never runs as part of `npm test`.
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vitest/config'
import { workspaceAliases } from '../scripts/workspaceAliases.mjs'

export default defineConfig({
  plugins: [react()],
  resolve: { alias: workspaceAliases },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['bench/render.tsx', 'bench/flows.ts'],
    environment: 'happy-dom',
    setupFiles: ['./src/test/setup.dom.ts'],
    testTimeout: 60_000,
  },
})
