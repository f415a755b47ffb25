/** Prints rows as an aligned table: first column left-aligned, the others right-aligned. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  const out = [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)]
  // One write, so a test runner's console capture cannot interleave the lines.
  console.log(out.join('\n'))
}

/** The middle value (the mean of the two middle ones); NaN for no values, printed as such, never 0. */
export const median = (values: number[]): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
