// The import graph of the project's TypeScript sources (the kit's `src/`, `packages/protocol/src`,
// `packages/service/src`), checked for two things, and the process exits 1 naming each offence:
//
// - an import circle: files that import each other, directly or through others (type-only imports
//   count: a circle of types still ties the files' meanings together);
// - an upward import between the layers
//       src/components → src/react → src/core → @latchkey/protocol ← @latchkey/service
//   (the chain adapters src/{viem,ethers,solana,wagmi} sit beside core; src/viem/react.ts also
//   uses react), and inside the service
//       kernel/ ← the activity API (pipeline/, policies/, domain/, activities/, queries/)
//               ← the wings (signin/, sending/, delivery/, observability/, frames/, dev/, limits/, mfa/, webhooks/, importing/)
//               ← the shell that assembles and runs them (assembly/, config/, commands/, server/,
//                 workers/, testing/ and the package's entry files);
//   a wing imports no other wing (what two wings share is a contract in kernel/), and pipeline/
//   imports no handler (activities/, queries/).
//
// It also prints the service's folder figures: how many folders (and loose files) its source has,
// on how many levels, and how many imports between folders close a loop (any such loop fails).
//
// Test files (`*.test.ts(x)`, `*.stories.tsx`, anything under a `test/` folder) are left out of the
// layer rule: the kit's tests run against the real service (`@latchkey/service/testing`) on purpose.
// They stay in the circle check (nothing imports a test, so one cannot close a circle unless a
// test-support file does).
//
// Imports are resolved by the installed TypeScript compiler with the root tsconfig.json (its
// `paths` map `latchkey/*` and `@latchkey/*` to the sources), so a package import counts the same
// as a relative one. `node scripts/importGraph.mjs --list` prints every edge instead.
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
const SOURCE_ROOTS = ['src', 'packages/protocol/src', 'packages/service/src']

/** Each layer and the layers its files may import (besides their own layer). */
export const LAYERS = {
  'kit entry': ['components', 'react', 'core', 'protocol'],
  components: ['react', 'core', 'protocol'],
  react: ['core', 'protocol'],
  core: ['protocol'],
  adapter: ['core', 'protocol'],
  'adapter (react)': ['adapter', 'react', 'core', 'protocol'],
  protocol: [],
  'service kernel': ['protocol'],
  'service api': ['service kernel', 'protocol'],
  'service wing': ['service api', 'service kernel', 'protocol'],
  'service shell': ['service wing', 'service api', 'service kernel', 'protocol'],
}

const SERVICE = 'packages/service/src/'
/** The service's folders by layer (anything else under it is the shell). */
export const SERVICE_API = ['pipeline', 'policies', 'domain', 'activities', 'queries']
export const SERVICE_WINGS = [
  'signin',
  'sending',
  'delivery',
  'observability',
  'frames',
  'dev',
  'limits',
  'mfa',
  'webhooks',
  'importing',
]

/** The service folder a file belongs to (`kernel`, `signin`, …), or '' for a loose file at its root. */
export const serviceFolderOf = (file) => {
  const inside = file.slice(SERVICE.length)
  const slash = inside.indexOf('/')
  return slash < 0 ? '' : inside.slice(0, slash)
}

/**
 * Edges the layer rule lets through, each with the reason. Keep it empty: an entry is a known
 * offence nobody has removed yet, and it must say why it may stay.
 * Format: `'from/file.ts -> to/file.ts': 'why'`.
 */
export const ALLOWED_EDGES = {}

/** The layer of a repository-relative path, or undefined when the layer rule does not apply to it. */
export function layerOf(file) {
  if (/\.test\.tsx?$|\.stories\.tsx?$/.test(file) || /(^|\/)test\//.test(file)) return undefined
  if (file.startsWith('packages/protocol/src/')) return 'protocol'
  if (file.startsWith(SERVICE)) {
    const folder = serviceFolderOf(file)
    if (folder === 'kernel') return 'service kernel'
    if (SERVICE_API.includes(folder)) return 'service api'
    if (SERVICE_WINGS.includes(folder)) return 'service wing'
    return 'service shell'
  }
  if (file === 'src/index.ts') return 'kit entry'
  if (file === 'src/viem/react.ts') return 'adapter (react)'
  const top = /^src\/([^/]+)\//.exec(file)?.[1]
  if (top === 'components' || top === 'react' || top === 'core') return top
  if (top === 'viem' || top === 'ethers' || top === 'solana' || top === 'wagmi') return 'adapter'
  return undefined
}

/** Inside the service's API layer: what pipeline/ must not import, the handlers it runs. */
const PIPELINE_MUST_NOT_IMPORT = ['activities', 'queries']

/** Why `from` may not import `to`, or undefined when it may. */
export function offence(from, to, layers = LAYERS, layerOfFile = layerOf) {
  const a = layerOfFile(from)
  const b = layerOfFile(to)
  if (a === undefined || b === undefined) return undefined
  if (a === 'service wing' && b === 'service wing' && serviceFolderOf(from) !== serviceFolderOf(to))
    return `a wing may not import another wing (${serviceFolderOf(from)}/ → ${serviceFolderOf(to)}/): put what they share in kernel/`
  if (
    a === 'service api' &&
    serviceFolderOf(from) === 'pipeline' &&
    PIPELINE_MUST_NOT_IMPORT.includes(serviceFolderOf(to))
  )
    return `the pipeline may not import the handlers it runs (${serviceFolderOf(to)}/)`
  if (a === b) return undefined
  if ((layers[a] ?? []).includes(b)) return undefined
  return `${a} may not import ${b}`
}

/**
 * Circles and upward edges of a graph (file → files it imports). Pure, so that the self-test can
 * feed it a made-up graph.
 * @returns `cycles`: one circle per strongly connected component, as the list of files walked
 *   (first = last); `upward`: `{ from, to, why }` for every edge the layer rule refuses.
 */
export function checkGraph(graph, { layers = LAYERS, layerOfFile = layerOf, allowed = ALLOWED_EDGES } = {}) {
  const upward = []
  for (const [from, targets] of graph)
    for (const to of targets) {
      const why = offence(from, to, layers, layerOfFile)
      if (why && !(`${from} -> ${to}` in allowed)) upward.push({ from, to, why })
    }
  return { cycles: stronglyConnected(graph).map((component) => circleIn(graph, component)), upward }
}

/** Tarjan's strongly connected components with more than one file, or one file importing itself. */
function stronglyConnected(graph) {
  const index = new Map()
  const low = new Map()
  const onStack = new Set()
  const stack = []
  const components = []
  let next = 0
  const visit = (start) => {
    // Iterative, so a deep import chain cannot overflow the call stack.
    const work = [[start, [...(graph.get(start) ?? [])], 0]]
    index.set(start, next)
    low.set(start, next++)
    stack.push(start)
    onStack.add(start)
    while (work.length > 0) {
      const frame = work[work.length - 1]
      const [node, targets] = frame
      if (frame[2] < targets.length) {
        const target = targets[frame[2]++]
        if (!index.has(target)) {
          index.set(target, next)
          low.set(target, next++)
          stack.push(target)
          onStack.add(target)
          work.push([target, [...(graph.get(target) ?? [])], 0])
        } else if (onStack.has(target)) low.set(node, Math.min(low.get(node), index.get(target)))
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work[work.length - 1][0]
        low.set(parent, Math.min(low.get(parent), low.get(node)))
      }
      if (low.get(node) === index.get(node)) {
        const component = []
        let member
        do {
          member = stack.pop()
          onStack.delete(member)
          component.push(member)
        } while (member !== node)
        if (component.length > 1 || (graph.get(node) ?? new Set()).has(node))
          components.push(component.sort())
      }
    }
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node)
  return components.sort((x, y) => x[0].localeCompare(y[0]))
}

/** The shortest circle through the component's first file (breadth-first, inside the component). */
function circleIn(graph, component) {
  const members = new Set(component)
  const start = component[0]
  const cameFrom = new Map()
  const queue = [start]
  while (queue.length > 0) {
    const node = queue.shift()
    for (const target of [...(graph.get(node) ?? [])].sort()) {
      if (!members.has(target)) continue
      if (target === start) {
        const walk = [start]
        for (let at = node; at !== start; at = cameFrom.get(at)) walk.splice(1, 0, at)
        return { files: component, walk: [...walk, start] }
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node)
        queue.push(target)
      }
    }
  }
  return { files: component, walk: [start, start] }
}

function sourceFiles(dir) {
  const out = []
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = `${dir}/${entry.name}`
    if (entry.isDirectory()) out.push(...sourceFiles(relative))
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(relative)
  }
  return out
}

/** file → the project files it imports (relative to the repository's root). */
export function projectGraph() {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    },
  )
  const host = ts.createCompilerHost(config.options)
  const cache = ts.createModuleResolutionCache(root, (name) => name, config.options)
  const files = SOURCE_ROOTS.flatMap(sourceFiles)
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const absolute = path.join(root, file)
    const { importedFiles } = ts.preProcessFile(readFileSync(absolute, 'utf8'), true, true)
    const targets = new Set()
    for (const { fileName: specifier } of importedFiles) {
      const resolved = ts.resolveModuleName(specifier, absolute, config.options, host, cache).resolvedModule
      if (!resolved || resolved.isExternalLibraryImport) continue
      const target = path.relative(root, resolved.resolvedFileName).split(path.sep).join('/')
      if (known.has(target)) targets.add(target)
    }
    graph.set(file, targets)
  }
  return graph
}

/** The report's lines for `checkGraph`'s result (empty when the graph is clean). */
export function describeFindings({ cycles, upward }) {
  const lines = []
  for (const { files, walk } of cycles)
    lines.push(
      `import circle: ${walk.join(' → ')}` +
        (files.length > walk.length - 1
          ? ` (one of ${files.length} files in a circle: ${files.join(', ')})`
          : ''),
    )
  for (const { from, to, why } of upward) lines.push(`upward import: ${from} → ${to} (${why})`)
  return lines
}

/** A loose file at the service's root is a unit of its own, as a folder is. */
const serviceUnitOf = (file) => serviceFolderOf(file) || file.slice(SERVICE.length)

/**
 * The service's shape at folder level (tests and testing/ left out): `units` (folders and loose
 * root files), `levels` (the longest chain of units importing one another, loops counted as one),
 * `loops` (each set of units that import each other round) and `loopImports` (the imports between
 * two units of one loop: each runs back up somewhere).
 */
export function serviceFolders(graph) {
  const unitGraph = new Map()
  for (const [from, targets] of graph) {
    if (!from.startsWith(SERVICE) || layerOf(from) === undefined || from.startsWith(`${SERVICE}testing/`))
      continue
    const a = serviceUnitOf(from)
    if (!unitGraph.has(a)) unitGraph.set(a, new Set())
    for (const to of targets) {
      if (!to.startsWith(SERVICE) || to.startsWith(`${SERVICE}testing/`)) continue
      const b = serviceUnitOf(to)
      if (b !== a) unitGraph.get(a).add(b)
      if (!unitGraph.has(b)) unitGraph.set(b, new Set())
    }
  }
  const loops = stronglyConnected(unitGraph)
  const loopOf = new Map()
  loops.forEach((members, index) => {
    for (const member of members) loopOf.set(member, index)
  })
  let loopImports = 0
  for (const [a, targets] of unitGraph)
    for (const b of targets) if (loopOf.has(a) && loopOf.get(a) === loopOf.get(b)) loopImports++
  // Levels: the longest path through the units, a loop standing for one step.
  const node = (unit) => (loopOf.has(unit) ? `loop ${loopOf.get(unit)}` : unit)
  const depth = new Map()
  const depthOf = (n, seen = new Set()) => {
    if (depth.has(n)) return depth.get(n)
    seen.add(n)
    let best = 0
    for (const [a, targets] of unitGraph) {
      if (node(a) !== n) continue
      for (const b of targets)
        if (node(b) !== n && !seen.has(node(b))) best = Math.max(best, depthOf(node(b), seen))
    }
    depth.set(n, best + 1)
    return best + 1
  }
  let levels = 0
  for (const unit of unitGraph.keys()) levels = Math.max(levels, depthOf(node(unit)))
  return { units: unitGraph.size, levels, loops, loopImports }
}

/** The service's biggest source files by lines (tests left out). */
export function biggestServiceFiles(count = 5) {
  return sourceFiles('packages/service/src')
    .filter((file) => layerOf(file) !== undefined)
    .map((file) => ({
      file: file.slice(SERVICE.length),
      lines: readFileSync(path.join(root, file), 'utf8').split('\n').length,
    }))
    .sort((x, y) => y.lines - x.lines)
    .slice(0, count)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = projectGraph()
  if (process.argv.includes('--list')) {
    for (const [from, targets] of graph) for (const to of targets) console.log(`${from} -> ${to}`)
  }
  const lines = describeFindings(checkGraph(graph))
  const folders = serviceFolders(graph)
  for (const members of folders.loops)
    lines.push(`service folder loop: ${members.join(', ')} import each other round`)
  console.log(
    `service folders: ${folders.units} folders and loose files on ${folders.levels} levels; ${folders.loops.length} loop(s), ${folders.loopImports} import(s) between folders of a loop`,
  )
  console.log(
    `service's biggest files: ${biggestServiceFiles()
      .map(({ file, lines }) => `${file} ${lines}`)
      .join(', ')}`,
  )
  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.size, 0)
  if (lines.length > 0) {
    for (const line of lines) console.error(line)
    console.error(`importGraph: ${lines.length} offence(s) in ${graph.size} files, ${edges} imports`)
    process.exit(1)
  }
  console.log(`importGraph: no circle, no upward import (${graph.size} files, ${edges} imports)`)
}
