/** Browsers, first match wins (Edge, Opera and Samsung Internet also name Chrome). */
const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|Chromium|CriOS)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
]

/** Systems, first match wins (iPhone and Android user agents also say "Mac OS X" and "Linux"). */
const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/\biPhone\b/, 'iPhone'],
  [/\biPad\b/, 'iPad'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bLinux\b/, 'Linux'],
]

const firstMatch = (table: readonly (readonly [RegExp, string])[], userAgent: string) =>
  table.find(([pattern]) => pattern.test(userAgent))?.[1]

/**
 * "Chrome on macOS", "Safari on iPhone", "Firefox on Windows": the browser and system a passkey is
 * being made on, read from the user agent, for names a person recognises later (the passkey in
 * their profile, a new account's name). Undefined when neither part is recognised.
 */
export function deviceName(userAgent: string = globalThis.navigator?.userAgent ?? ''): string | undefined {
  const browser = firstMatch(BROWSERS, userAgent)
  const system = firstMatch(SYSTEMS, userAgent)
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system
}
