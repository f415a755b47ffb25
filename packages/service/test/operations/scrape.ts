// Reading a service's admin listener: its Prometheus text as samples, and its probes.

/** One sample of the exposition: `name{labels} value`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Every sample of `GET <adminUrl>/metrics`. */
export async function scrape(adminUrl: string): Promise<Sample[]> {
  const response = await fetch(`${adminUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`)
  const samples: Sample[] = []
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a Prometheus sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

/**
 * The samples of metric `name` whose labels include `where`, as `labels → value` rows without the
 * labels given in `where` (so a test compares whole sets).
 */
export function rows(samples: Sample[], name: string, where: Record<string, string> = {}) {
  const found: Record<string, number> = {}
  for (const sample of samples) {
    if (sample.name !== name) continue
    if (!Object.entries(where).every(([key, value]) => sample.labels[key] === value)) continue
    const rest = Object.entries(sample.labels)
      .filter(([key]) => !(key in where))
      .map(([key, value]) => `${key}=${value}`)
      .join(',')
    found[rest] = sample.value
  }
  return found
}

/** `GET <url><path>` → status and JSON body. */
export async function probe(url: string, path: '/livez' | '/readyz', timeoutMs = 2_000) {
  const started = performance.now()
  const response = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(timeoutMs) })
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    ms: performance.now() - started,
  }
}
