// The page the published-clients spec drives: @turnkey/core 2.8, @turnkey/core 1.14 and
// @turnkey/react-wallet-kit 2.4 bundled as they are published (nothing patched or aliased), so
// the spec sees what an app developer gets against the local service.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

const here = path.dirname(new URL(import.meta.url).pathname)
// @turnkey/crypto's X.509 dependency (tsyringe) needs the Reflect metadata polyfill before any
// module runs, as its error says; an app adds it the same way. A classic inline script runs first.
const reflectPolyfill = readFileSync(
  createRequire(import.meta.url).resolve('reflect-metadata/Reflect.js'),
  'utf8',
)

export default defineConfig({
  root: here,
  base: './',
  plugins: [
    react(),
    {
      name: 'reflect-metadata-first',
      transformIndexHtml: () => [{ tag: 'script', children: reflectPolyfill, injectTo: 'head-prepend' }],
    },
  ],
  logLevel: 'warn',
  // Some of their dependencies read Node's `global`.
  define: { global: 'globalThis' },
  build: {
    outDir: path.join(here, '../../test-results/published-clients-page'),
    emptyOutDir: true,
    chunkSizeWarningLimit: 10_000,
    minify: false,
    sourcemap: false,
    rollupOptions: {
      input: { core: path.join(here, 'index.html'), react: path.join(here, 'react.html') },
    },
  },
})
