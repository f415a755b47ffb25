// Playwright runs against the stack `scripts/e2e.mjs` starts (EVM node, local services, built
// playground); it passes their addresses in LATCHKEY_E2E_STACK. Debian's Chromium, never a
// downloaded browser build.
import { defineConfig } from '@playwright/test'
import { chromiumLaunchOptions } from '../scripts/chromium.mjs'

const ci = Boolean(process.env.CI)

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../test-results',
  fullyParallel: true,
  workers: 2,
  // No retry, in CI either: a test that fails now and then is a bug to find.
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  forbidOnly: ci,
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: chromiumLaunchOptions,
    viewport: { width: 1280, height: 800 },
    actionTimeout: 10_000,
    navigationTimeout: 20_000,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
})
