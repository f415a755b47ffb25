/** `4:05` or `1:02:03`: a countdown in the locale's digits. */
export function formatCountdown(ms: number, locale: string): string {
  const total = Math.max(0, Math.ceil(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  const nf = new Intl.NumberFormat(locale, { minimumIntegerDigits: 2, useGrouping: false })
  const nf1 = new Intl.NumberFormat(locale, { useGrouping: false })
  return h > 0 ? `${nf1.format(h)}:${nf.format(m)}:${nf.format(s)}` : `${nf1.format(m)}:${nf.format(s)}`
}

/** A date and time in the locale's format. */
export const formatDateTime = (epochMs: number, locale: string) =>
  new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(epochMs)
