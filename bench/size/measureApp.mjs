// Builds one minimal app with Vite's JS API (production, default minifier, no sourcemaps,
// nothing written to disk) and measures what a browser downloads: gzip -9 of every emitted
// JS and CSS file, split into start-up (what index.html loads without a dynamic import) and
// all chunks. Shared by `scripts/check-size.mjs` (the budgets) and `bench/size/benchSize.mjs`.
import { existsSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import react from '@vitejs/plugin-react'
import { build } from 'vite'
import { workspaceAliases } from '../../scripts/workspaceAliases.mjs'

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** `latchkey` resolves to the sources, so sizes are measured without a prior `npm run build`. */
export const latchkeyAliases = [
  { find: /^latchkey$/, replacement: join(projectRoot, 'src/index.ts') },
  { find: /^latchkey\/core$/, replacement: join(projectRoot, 'src/core/index.ts') },
  { find: /^latchkey\/(viem|ethers|solana|wagmi)$/, replacement: join(projectRoot, 'src/$1/index.ts') },
  { find: /^latchkey\/viem\/react$/, replacement: join(projectRoot, 'src/viem/react.ts') },
  { find: /^latchkey\/styles\.css$/, replacement: join(projectRoot, 'src/components/styles.css') },
  ...workspaceAliases,
]

/** Modules whose cost is the baseline (react + react-dom), excluded from "beyond baseline" breakdowns. */
export const baselinePackages = new Set(['react', 'react-dom', 'scheduler'])

/**
 * Every app, ours and the anchor, gets the project's own react and react-dom, so the baseline
 * subtracts the same bytes from each.
 * @returns {import('vite').Plugin}
 */
function projectReact() {
  const importer = join(projectRoot, 'package.json')
  return {
    name: 'latchkey-bench:project-react',
    enforce: 'pre',
    async resolveId(source, from, options) {
      if (!/^(react|react-dom|scheduler)(\/.*)?$/.test(source) || from === importer) return null
      return this.resolve(source, importer, { ...options, skipSelf: true })
    },
  }
}

/** @param {Uint8Array | string} data */
export function gzipSize(data) {
  return gzipSync(typeof data === 'string' ? Buffer.from(data) : data, { level: 9 }).length
}

/**
 * Groups a module id by what a reader would blame: the npm package, or the source file
 * relative to the project root.
 * @param {string} id
 */
export function moduleGroup(id) {
  const clean = id.replace(/^\0/, '').replace(/\?.*$/, '')
  const at = clean.lastIndexOf(`${sep}node_modules${sep}`)
  if (at >= 0) {
    const parts = clean.slice(at + 14).split(sep)
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? clean)
  }
  if (clean.startsWith(projectRoot)) return relative(projectRoot, clean)
  return clean
}

/**
 * The npm package a module id belongs to and the folder it was installed in, or undefined for
 * a project source.
 * @param {string} id
 */
export function packageRoot(id) {
  const clean = id.replace(/^\0/, '').replace(/\?.*$/, '')
  const at = clean.lastIndexOf(`${sep}node_modules${sep}`)
  if (at < 0) return undefined
  const parts = clean.slice(at + 14).split(sep)
  const name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? '')
  return { name, folder: clean.slice(0, at + 14 + name.length) }
}

/**
 * @typedef {{ js: number, css: number, total: number, files: number }} Sizes
 * @typedef {{ fileName: string, gz: number, startup: boolean, parts: [group: string, bytes: number][] }} FileSize
 *   `parts`: the rendered (pre-minify) length of each module group in the file.
 * @typedef {{ name: string, startup: Sizes, all: Sizes, files: FileSize[], ms: number, packageRoots: Map<string, Set<string>> }} AppSize
 *   `packageRoots`: for each npm package bundled, the folders its modules came from (two folders
 *   are two copies of the package in the app).
 */

/**
 * @param {{ name: string, root: string, aliases?: import('vite').Alias[], external?: RegExp }} app
 *   `external`: imports left out of the build (to measure an app without a library's modules).
 * @returns {Promise<AppSize>}
 */
export async function measureApp({ name, root, aliases = latchkeyAliases, external }) {
  const started = performance.now()
  if (!existsSync(join(root, 'index.html'))) throw new Error(`${name}: no index.html in ${root}`)
  const result = await build({
    root,
    configFile: false,
    envFile: false,
    publicDir: false,
    logLevel: 'error',
    mode: 'production',
    plugins: [projectReact(), react()],
    resolve: { alias: aliases },
    build: {
      write: false,
      sourcemap: false,
      reportCompressedSize: false,
      emptyOutDir: false,
      ...(external ? { rollupOptions: { external } } : {}),
    },
  })
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => ('output' in r ? r.output : []))
  /** @type {Map<string, any>} */
  const byName = new Map(outputs.map((o) => [o.fileName, o]))

  // Start-up: the entry chunks, their static imports (transitively) and the CSS those import.
  const startup = new Set()
  const visit = (/** @type {string} */ fileName) => {
    if (startup.has(fileName)) return
    const chunk = byName.get(fileName)
    if (chunk?.type !== 'chunk') return
    startup.add(fileName)
    for (const css of chunk.viteMetadata?.importedCss ?? []) startup.add(css)
    for (const imported of chunk.imports) visit(imported)
  }
  for (const o of outputs) if (o.type === 'chunk' && o.isEntry) visit(o.fileName)

  /** @type {FileSize[]} */
  const files = []
  /** @type {Map<string, Set<string>>} */
  const packageRoots = new Map()
  for (const o of outputs) {
    const isJs = o.type === 'chunk'
    const isCss = o.type === 'asset' && o.fileName.endsWith('.css')
    if (!isJs && !isCss) continue
    /** @type {Map<string, number>} */
    const parts = new Map()
    if (isJs)
      for (const [id, m] of Object.entries(o.modules)) {
        parts.set(moduleGroup(id), (parts.get(moduleGroup(id)) ?? 0) + m.renderedLength)
        const root = packageRoot(id)
        if (root) packageRoots.set(root.name, (packageRoots.get(root.name) ?? new Set()).add(root.folder))
      }
    else parts.set(`CSS ${o.fileName}`, o.source.length)
    files.push({
      fileName: o.fileName,
      gz: gzipSize(isJs ? o.code : o.source),
      startup: startup.has(o.fileName),
      parts: [...parts],
    })
  }
  const sum = (/** @type {(f: AppSize['files'][number]) => boolean} */ pick) => {
    const picked = files.filter(pick)
    const js = picked.filter((f) => f.fileName.endsWith('.js')).reduce((s, f) => s + f.gz, 0)
    const css = picked.filter((f) => f.fileName.endsWith('.css')).reduce((s, f) => s + f.gz, 0)
    return { js, css, total: js + css, files: picked.length }
  }
  return {
    name,
    startup: sum((f) => f.startup),
    all: sum(() => true),
    files: files.sort((a, b) => b.gz - a.gz),
    packageRoots,
    ms: Math.round(performance.now() - started),
  }
}

/** @param {number} bytes */
export function kb(bytes) {
  return `${(bytes / 1000).toFixed(1)} kB`
}

/**
 * Prints rows as an aligned table (first column left-aligned, the rest right-aligned).
 * @param {string[]} header
 * @param {string[][]} rows
 */
export function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (/** @type {string[]} */ cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  console.log(line(header))
  console.log(widths.map((w) => '-'.repeat(w)).join('  '))
  for (const r of rows) console.log(line(r))
}

/**
 * Estimated gzip cost of every module group beyond the react baseline, per file. A file's size
 * is shared among its modules in proportion to their rendered length. React may be split over
 * several files (e.g. a shared `jsx-runtime` chunk), so the baseline's measured size
 * (`baselineGz`) is taken once off all files that hold react, and what is left of them is ours.
 * @param {FileSize[]} files
 * @param {number} baselineGz
 * @returns {Map<string, { group: string, gz: number, bytes: number }[]>} by file name, heaviest first
 */
export function attribute(files, baselineGz) {
  const ours = (/** @type {FileSize} */ f) => f.parts.filter(([group]) => !baselinePackages.has(group))
  const rendered = (/** @type {[string, number][]} */ parts) =>
    parts.reduce((sum, [, bytes]) => sum + bytes, 0)
  const mixed = files.filter((f) => ours(f).length < f.parts.length)
  const mixedLeft = Math.max(0, mixed.reduce((sum, f) => sum + f.gz, 0) - baselineGz)
  const mixedOurs = mixed.reduce((sum, f) => sum + rendered(ours(f)), 0) || 1
  /** @type {Map<string, { group: string, gz: number, bytes: number }[]>} */
  const result = new Map()
  for (const file of files) {
    const parts = ours(file)
    const perByte = mixed.includes(file) ? mixedLeft / mixedOurs : file.gz / (rendered(parts) || 1)
    const groups = parts.map(([group, bytes]) => ({ group, bytes, gz: bytes * perByte }))
    result.set(
      file.fileName,
      groups.sort((a, b) => b.gz - a.gz),
    )
  }
  return result
}

/**
 * The heaviest module groups of an app beyond the react baseline, over all (or start-up) files.
 * @param {AppSize} app
 * @param {{ baselineGz?: number, startupOnly?: boolean, limit?: number }} [options]
 */
export function heaviestGroups(app, { baselineGz = 0, startupOnly = false, limit = 10 } = {}) {
  /** @type {Map<string, { group: string, gz: number, bytes: number }>} */
  const merged = new Map()
  const files = app.files.filter((f) => f.startup || !startupOnly)
  for (const groups of attribute(files, baselineGz).values()) {
    for (const g of groups) {
      const m = merged.get(g.group) ?? { group: g.group, gz: 0, bytes: 0 }
      m.gz += g.gz
      m.bytes += g.bytes
      merged.set(g.group, m)
    }
  }
  return [...merged.values()].sort((a, b) => b.gz - a.gz).slice(0, limit)
}
