// The minimal apps measured by `npm run test:size` and `npm run bench:size`.
import { join } from 'node:path'
import { projectRoot } from './measureApp.mjs'

/**
 * @typedef {{ name: string, label: string, root: string, needs: string[], react: boolean }} SizeApp
 * `needs` lists the project files an app imports; while one is missing (its helper has not
 * written it yet) the app is reported as skipped rather than failed. `react` apps are
 * compared with the react-only baseline; the others are measured whole.
 */

/** @type {SizeApp[]} */
export const sizeApps = [
  {
    name: 'baseline',
    label: 'react-only baseline (createRoot + a button)',
    root: join(projectRoot, 'bench/size/apps/baseline'),
    needs: [],
    react: true,
  },
  {
    name: 'signin',
    label: 'sign-in app: <LatchkeyProvider> + <AuthModal/> + styles.css',
    root: join(projectRoot, 'bench/size/apps/signin'),
    needs: ['src/index.ts', 'src/components/styles.css'],
    react: true,
  },
  {
    // Issue 38: the drop-in's own chunks are measured in it (check-size.mjs).
    name: 'security',
    label: 'account page: <LatchkeyProvider> + <SecuritySettings/> + styles.css',
    root: join(projectRoot, 'bench/size/apps/security'),
    needs: ['src/index.ts', 'src/components/mfa/SecuritySettings.tsx'],
    react: true,
  },
  // issue 37: <SpendingLimits/>, its panel a chunk of its own (check-size.mjs)
  {
    name: 'limits',
    label: 'account page: <LatchkeyProvider> + <SpendingLimits/> + styles.css',
    root: join(projectRoot, 'bench/size/apps/limits'),
    needs: ['src/index.ts', 'src/components/limits/SpendingLimits.tsx'],
    react: true,
  },
  {
    // Issue 38: <LinkedLogins/>'s lazy chunks (linking an e-mail, linking OAuth) are measured in it.
    name: 'logins',
    label: 'account page: <LatchkeyProvider> + <LinkedLogins/> + styles.css',
    root: join(projectRoot, 'bench/size/apps/logins'),
    needs: ['src/index.ts', 'src/components/logins/LinkedLogins.tsx'],
    react: true,
  },
  {
    name: 'core',
    label: 'latchkey/core: createLatchkey + e-mail OTP + signRawPayloads',
    root: join(projectRoot, 'bench/size/apps/core'),
    needs: ['src/core/index.ts'],
    react: false,
  },
]

/**
 * @typedef {SizeApp & { base: string, target: number }} JoinedApp
 * Latchkey added to an existing app: `base` names the app without it; the cost is the difference
 * of their start-up sizes (`target` in bytes of gzip -9).
 */

/** @type {SizeApp} an app that already uses react-query and wagmi (the common case) */
export const queryWagmiApp = {
  name: 'query-wagmi',
  label: 'react-query + wagmi app (QueryClient, injected connector, connection, balance, a query)',
  root: join(projectRoot, 'bench/size/apps/query-wagmi'),
  needs: [],
  react: true,
}

/** @type {JoinedApp[]} */
export const joinedApps = [
  {
    name: 'query-wagmi-signin',
    label: 'the same + <LatchkeyProvider queryClient> + <AuthModal/> + styles.css',
    root: join(projectRoot, 'bench/size/apps/query-wagmi-signin'),
    needs: ['src/index.ts', 'src/components/styles.css'],
    react: true,
    base: 'query-wagmi',
    target: 15_000,
  },
]

/** Packages that must be bundled once: an app and the kit share them (peer resolution). */
export const sharedPackages = ['@tanstack/react-query', '@tanstack/query-core', 'react', 'zustand']

/**
 * @typedef {SizeApp & { base: string, library: string }} AdapterApp
 * An entry point that adapts another library (viem, ethers, …). `base` names the app that uses
 * latchkey/core and that library without the adapter; the adapter's cost is the difference of
 * their all-chunks sizes (target: at most 4 kB gz each).
 */

/** @type {SizeApp[]} the apps adapters are measured against */
export const adapterBaseApps = [
  {
    name: 'viem-base',
    label: 'latchkey/core + viem wallet client (no adapter)',
    root: join(projectRoot, 'bench/size/apps/viem-base'),
    needs: ['src/core/index.ts'],
    react: false,
  },
  {
    name: 'ethers-base',
    label: 'latchkey/core + ethers signer and contract (no adapter)',
    root: join(projectRoot, 'bench/size/apps/ethers-base'),
    needs: ['src/core/index.ts'],
    react: false,
  },
  {
    name: 'solana-base',
    label: 'latchkey/core + @solana/kit transfer signed by a key pair (no adapter)',
    root: join(projectRoot, 'bench/size/apps/solana-base'),
    needs: ['src/core/index.ts'],
    react: false,
  },
  {
    name: 'wagmi-base',
    label: 'latchkey/core + wagmi (injected): send, receipt, contract, sign (no adapter)',
    root: join(projectRoot, 'bench/size/apps/wagmi-base'),
    needs: ['src/core/index.ts'],
    react: false,
  },
]

/** @type {AdapterApp[]} */
export const adapterApps = [
  {
    name: 'viem',
    label: 'latchkey/viem: toLatchkeyAccount + EIP-1193 provider',
    root: join(projectRoot, 'bench/size/apps/viem'),
    needs: ['src/viem/index.ts'],
    react: false,
    base: 'viem-base',
    library: 'viem',
  },
  {
    name: 'ethers',
    label: 'latchkey/ethers: LatchkeySigner',
    root: join(projectRoot, 'bench/size/apps/ethers'),
    needs: ['src/ethers/index.ts'],
    react: false,
    base: 'ethers-base',
    library: 'ethers',
  },
  {
    name: 'solana',
    label: 'latchkey/solana: kit transaction + message signer',
    root: join(projectRoot, 'bench/size/apps/solana'),
    needs: ['src/solana/index.ts'],
    react: false,
    base: 'solana-base',
    library: '@solana/kit',
  },
  {
    // wagmi adapts wagmi (its connector API is @wagmi/core's, which wagmi re-exports) and viem (the
    // connector's provider signs with viem): all three left out.
    name: 'wagmi',
    label: 'latchkey/wagmi: connector (with latchkey/viem provider)',
    root: join(projectRoot, 'bench/size/apps/wagmi'),
    needs: ['src/wagmi/index.ts'],
    react: false,
    base: 'wagmi-base',
    library: '(?:wagmi|@wagmi/core|viem)',
  },
]

/** @type {SizeApp} */
export const anchorApp = {
  name: 'anchor',
  label: '@turnkey/react-wallet-kit 2.4.3: TurnkeyProvider + handleLogin modal + styles.css',
  root: join(projectRoot, 'bench/anchor/app'),
  needs: ['bench/anchor/node_modules/@turnkey/react-wallet-kit/package.json'],
  react: true,
}
