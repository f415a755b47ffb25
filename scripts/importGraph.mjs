// The import graph of the project's TypeScript sources (the kit's `src/`, `packages/protocol/src`,
// `packages/service/src`), checked for two things, and the process exits 1 naming each offence:
//
// - an import circle: files that import each other, directly or through others (type-only imports
//   count: a circle of types still ties the files' meanings together);
// - an upward import between the layers
//       src/components → src/react → src/core → @latchkey/protocol ← @latchkey/service
//   (the chain adapters src/{viem,ethers,solana,wagmi} sit beside core; src/viem/react.ts also
//   uses react), and inside the service, pipeline/ ← the handlers and plugins (activities/,
//   queries/, signin/, dev/, plugins.ts).
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
  'service pipeline': ['service', 'protocol'],
  service: ['service pipeline', 'protocol'],
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
  if (file.startsWith('packages/service/src/pipeline/')) return 'service pipeline'
  if (file.startsWith('packages/service/src/')) return 'service'
  if (file === 'src/index.ts') return 'kit entry'
  if (file === 'src/viem/react.ts') return 'adapter (react)'
  const top = /^src\/([^/]+)\//.exec(file)?.[1]
  if (top === 'components' || top === 'react' || top === 'core') return top
  if (top === 'viem' || top === 'ethers' || top === 'solana' || top === 'wagmi') return 'adapter'
  return undefined
}

/**
 * Inside the service: what pipeline/ must not import, whatever the layer table says: the handlers
 * (activities/, queries/) and the plugins (signin/, dev/, and plugins.ts that lists them).
 */
const PIPELINE_MUST_NOT_IMPORT = ['activities/', 'queries/', 'signin/', 'dev/', 'plugins.ts']

/** Why `from` may not import `to`, or undefined when it may. */
export function offence(from, to, layers = LAYERS, layerOfFile = layerOf) {
  const a = layerOfFile(from)
  const b = layerOfFile(to)
  if (a === undefined || b === undefined || a === b) return undefined
  if (a === 'service pipeline') {
    const inside = to.replace(/^packages\/service\/src\//, '')
    const banned = PIPELINE_MUST_NOT_IMPORT.find((prefix) => inside.startsWith(prefix))
    if (banned) return `the pipeline may not import the handlers and plugins (${banned})`
  }
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

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = projectGraph()
  if (process.argv.includes('--list')) {
    for (const [from, targets] of graph) for (const to of targets) console.log(`${from} -> ${to}`)
  }
  const lines = describeFindings(checkGraph(graph))
  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.size, 0)
  if (lines.length > 0) {
    for (const line of lines) console.error(line)
    console.error(`importGraph: ${lines.length} offence(s) in ${graph.size} files, ${edges} imports`)
    process.exit(1)
  }
  console.log(`importGraph: no circle, no upward import (${graph.size} files, ${edges} imports)`)
}
