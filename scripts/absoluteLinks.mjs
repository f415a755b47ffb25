// The README and docs link with relative paths (`docs/sending.md`, `../README.md#recipes`), which
// work in a checkout and on GitHub; npm renders a package's README.md alone, where they would be
// broken. At pack time each package's README.md is rewritten with absolute links into the
// repository (files and folders on github.com, images on raw.githubusercontent.com) and put back
// after: `node scripts/absoluteLinks.mjs prepack` / `postpack` in the package's folder (the
// packages' prepack and postpack scripts), and scripts/packKit.mjs around its `npm pack`.
// A relative link to a path the checkout does not have fails the pack.
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** `https://github.com/<owner>/<name>` from the root package.json's repository. */
export function repositoryUrl() {
  const { repository } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
  const url = typeof repository === 'string' ? repository : repository.url
  const match = /github\.com[/:]([\w.-]+)\/([\w.-]+?)(?:\.git)?$/.exec(url)
  if (!match) throw new Error(`absoluteLinks: the repository ${url} is not on GitHub`)
  return `https://github.com/${match[1]}/${match[2]}`
}

const IMAGE = /\.(png|jpe?g|gif|svg|webp)$/i

/**
 * `markdown` (the file `file`, relative to the repository's root) with every relative link and
 * image made absolute: `docs/x.md#a` → `<repository>/blob/<ref>/docs/x.md#a`, a folder →
 * `/tree/<ref>/…`, an image → `https://raw.githubusercontent.com/…/<ref>/…`. Absolute URLs,
 * `mailto:` and `#anchors` are kept; code blocks and inline code are left alone. `exists(path)`
 * answers 'file', 'dir' or undefined for a repository path; a link to a missing one throws.
 */
export function absoluteLinks(
  markdown,
  { file, repository = repositoryUrl(), ref = 'main', exists = kindOf },
) {
  const raw = repository.replace('https://github.com/', 'https://raw.githubusercontent.com/')
  const rewrite = (target, image) => {
    if (/^([a-z][a-z\d+.-]*:|#|\/\/)/i.test(target)) return target
    const hash = target.indexOf('#')
    const pathPart = hash === -1 ? target : target.slice(0, hash)
    const anchor = hash === -1 ? '' : target.slice(hash)
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), pathPart))
    if (resolved.startsWith('..') || path.posix.isAbsolute(pathPart))
      throw new Error(`${file}: the link ${target} leaves the repository`)
    const kind = exists(resolved)
    if (!kind) throw new Error(`${file}: the link ${target} points to ${resolved}, which does not exist`)
    // The repository's README is its front page on GitHub.
    if (resolved === '.' || resolved === 'README.md') return `${repository}${anchor}`
    if (image || IMAGE.test(resolved)) return `${raw}/${ref}/${resolved}`
    return `${repository}/${kind === 'dir' ? 'tree' : 'blob'}/${ref}/${resolved}${anchor}`
  }
  // Fenced blocks and inline code spans are kept as they are; links are rewritten elsewhere,
  // including a link whose text holds a code span ([the `<X/>` drop-in](docs/x.md)).
  return markdown
    .split(/(^```[\s\S]*?^```$)/m)
    .map((part, index) => {
      if (index % 2 === 1) return part
      return part
        .replace(
          /(`[^`\n]*`)|(!?)\[((?:`[^`\n]*`|[^\]\n`])*)\]\(([^)\s]+)(\s+"[^"]*")?\)/g,
          (_, code, bang, text, target, title = '') =>
            code ?? `${bang}[${text}](${rewrite(target, bang === '!')}${title})`,
        )
        .replace(
          /^(\s{0,3}\[[^\]\n]+\]:\s+)(\S+)/gm,
          (_, label, target) => `${label}${rewrite(target, false)}`,
        )
    })
    .join('')
}

/** 'file', 'dir' or undefined for a path relative to the repository's root. */
function kindOf(relative) {
  const full = path.join(root, relative)
  if (!existsSync(full)) return undefined
  return statSync(full).isDirectory() ? 'dir' : 'file'
}

const BACKUP = '.README.md.checkout'

/** Rewrites `<dir>/README.md` for npm, keeping the checkout's text beside it until `restoreReadme`. */
export function prepareReadme(dir) {
  const readme = path.join(dir, 'README.md')
  const backup = path.join(dir, BACKUP)
  if (existsSync(backup)) restoreReadme(dir) // a pack that failed half-way
  const text = readFileSync(readme, 'utf8')
  const rewritten = absoluteLinks(text, { file: path.relative(root, readme).split(path.sep).join('/') })
  renameSync(readme, backup)
  writeFileSync(readme, rewritten)
}

/** Puts the checkout's README.md back after a pack. */
export function restoreReadme(dir) {
  const backup = path.join(dir, BACKUP)
  if (existsSync(backup)) renameSync(backup, path.join(dir, 'README.md'))
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [command] = process.argv.slice(2)
  if (command === 'prepack') prepareReadme(process.cwd())
  else if (command === 'postpack') restoreReadme(process.cwd())
  else {
    process.stderr.write('usage: node scripts/absoluteLinks.mjs prepack|postpack (in a package folder)\n')
    process.exit(2)
  }
}
