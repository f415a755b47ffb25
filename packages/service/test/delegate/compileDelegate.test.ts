import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { compileContracts } from '../../../../scripts/compileDelegate.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..')

// solc-js is WebAssembly: one compile of every contract takes 10-20 s on a shared machine, so
// everything is checked from that one compile.
it('the committed contract artifacts are what the pinned solc makes of the sources', {
  timeout: 120_000,
}, () => {
  const files = compileContracts()
  expect(Object.keys(files).sort()).toEqual([
    'contracts/LatchkeyDelegate.json',
    'contracts/test/L1FeeOracle.json',
    'contracts/test/Reenterer.json',
    'contracts/test/TestToken.json',
    'packages/service/src/sending/delegate/delegateContract.ts',
  ])
  for (const [file, text] of Object.entries(files))
    expect(
      readFileSync(path.join(root, file), 'utf8'),
      `${file} is stale: run node scripts/compileDelegate.mjs`,
    ).toBe(text)
  const artifact = JSON.parse(files['contracts/LatchkeyDelegate.json'] as string)
  expect(artifact.compiler.version).toMatch(/^0\.8\.37\+commit\./)
  expect(artifact.settings).toEqual({
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'prague',
    metadata: { bytecodeHash: 'ipfs' },
  })
})
