// How every script and spec here launches Debian's Chromium (never a downloaded browser build):
// headless, no sandbox (CI runs as root), and none of the background connections this machine's
// closed network would refuse.

/** Debian's Chromium (scripts/ensure-chromium.sh installs it); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** `launchOptions` for Playwright (`chromium.launch(…)` or a config's `use.launchOptions`). */
export const chromiumLaunchOptions = { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }
