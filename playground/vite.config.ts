// The playground: a Vite app that imports Latchkey only through its public entry points, aliased
// to the sources so `npm start` needs no build. Service URLs and dev credentials arrive at run
// time from `/playground-config.json`, served by the plugin below from the environment that
// `scripts/start.mjs` (or the e2e runner) sets, so one build works against any local service.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig, type Plugin } from 'vite'
import { workspaceAliases } from '../scripts/workspaceAliases.mjs'

const src = (file: string) => fileURLToPath(new URL(`../src/${file}`, import.meta.url))

function playgroundConfig(): Plugin {
  const serve = (middlewares: {
    use: (path: string, fn: (req: IncomingMessage, res: ServerResponse) => void) => void
  }) =>
    middlewares.use('/playground-config.json', (_req, res) => {
      const config = process.env.LATCHKEY_PLAYGROUND_CONFIG
      res.setHeader('content-type', 'application/json')
      res.setHeader('cache-control', 'no-store')
      if (!config) {
        res.statusCode = 503
        res.end(
          JSON.stringify({ error: 'No local service configured: start the playground with `npm start`.' }),
        )
        return
      }
      res.end(config)
    })
  return {
    name: 'latchkey-playground-config',
    // Block bodies: a function returned from these hooks would run as a post-middleware hook.
    configureServer(server) {
      serve(server.middlewares)
    },
    configurePreviewServer(server) {
      serve(server.middlewares)
    },
  }
}

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react(), playgroundConfig()],
  resolve: {
    alias: [
      { find: /^latchkey\/core$/, replacement: src('core/index.ts') },
      { find: /^latchkey\/solana$/, replacement: src('solana/index.ts') },
      { find: /^latchkey\/wagmi$/, replacement: src('wagmi/index.ts') },
      { find: /^latchkey\/viem$/, replacement: src('viem/index.ts') },
      { find: /^latchkey\/viem\/react$/, replacement: src('viem/react.ts') },
      { find: /^latchkey\/ethers$/, replacement: src('ethers/index.ts') },
      { find: /^latchkey\/styles\.css$/, replacement: src('components/styles.css') },
      { find: /^latchkey$/, replacement: src('index.ts') },
      ...workspaceAliases,
    ],
  },
  server: { fs: { allow: [fileURLToPath(new URL('..', import.meta.url))] } },
  build: {
    outDir: fileURLToPath(new URL('../node_modules/.cache/playground-dist', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
  },
  clearScreen: false,
})
