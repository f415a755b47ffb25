// Vite aliases that resolve the workspace packages to their sources, so tests, Storybook and the
// playground run without a build (tsconfig.json's `paths` say the same to tsc and tsx).
import { fileURLToPath } from 'node:url'

const at = (file) => fileURLToPath(new URL(`../${file}`, import.meta.url))

export const workspaceAliases = [
  { find: /^@latchkey\/protocol$/, replacement: at('packages/protocol/src/index.ts') },
  {
    find: /^@latchkey\/protocol\/(hpke|webAuthnChallengeOf)$/,
    replacement: at('packages/protocol/src/$1.ts'),
  },
  { find: /^@latchkey\/service$/, replacement: at('packages/service/src/index.ts') },
  { find: /^@latchkey\/service\/testing$/, replacement: at('packages/service/src/testing/index.ts') },
  { find: /^@latchkey\/service\/node$/, replacement: at('packages/service/src/node.ts') },
]
