/**
 * "Chrome on macOS", "Safari on iPhone", "Firefox on Windows": the browser and system a passkey is
 * being made on, read from the user agent, for names a person recognises later (the passkey in
 * their profile, a new account's name). Undefined when neither part is recognised.
 */
export function deviceName(userAgent: string = globalThis.navigator?.userAgent ?? ''): string | undefined {
  const browser = /\bEdg(?:e|A|iOS)?\//.test(userAgent)
    ? 'Edge'
    : /\bSamsungBrowser\//.test(userAgent)
      ? 'Samsung Internet'
      : /\b(?:OPR|Opera)\//.test(userAgent)
        ? 'Opera'
        : /\b(?:Firefox|FxiOS)\//.test(userAgent)
          ? 'Firefox'
          : /\b(?:HeadlessChrome|Chrome|Chromium|CriOS)\//.test(userAgent)
            ? 'Chrome'
            : /\bVersion\/[\d.]+.*\bSafari\//.test(userAgent)
              ? 'Safari'
              : undefined
  const system = /\biPhone\b/.test(userAgent)
    ? 'iPhone'
    : /\biPad\b/.test(userAgent)
      ? 'iPad'
      : /\bAndroid\b/.test(userAgent)
        ? 'Android'
        : /\bCrOS\b/.test(userAgent)
          ? 'ChromeOS'
          : /\bMac OS X\b|\bMacintosh\b/.test(userAgent)
            ? 'macOS'
            : /\bWindows\b/.test(userAgent)
              ? 'Windows'
              : /\bLinux\b/.test(userAgent)
                ? 'Linux'
                : undefined
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system
}
