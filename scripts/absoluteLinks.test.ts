// The pack-time rewrite of the READMEs' relative links (scripts/absoluteLinks.mjs), and that every
// relative link of the README, the docs and the packages' READMEs resolves in the checkout.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { absoluteLinks, prepareReadme, repositoryUrl, restoreReadme } from './absoluteLinks.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const repository = 'https://github.com/acme/kit'
const tree: Record<string, 'file' | 'dir'> = {
  'README.md': 'file',
  docs: 'dir',
  'docs/sending.md': 'file',
  'docs/playground.png': 'file',
  'examples/nextjs': 'dir',
  'packages/service/src/README.md': 'file',
}
const rewrite = (markdown: string, file = 'README.md') =>
  absoluteLinks(markdown, { file, repository, exists: (p: string) => tree[p] })

describe('absoluteLinks', () => {
  it('makes files, folders, images and the front page absolute, keeping anchors', () => {
    expect(rewrite('See [sending](docs/sending.md#caps) and [the example](examples/nextjs).')).toBe(
      'See [sending](https://github.com/acme/kit/blob/main/docs/sending.md#caps) and [the example](https://github.com/acme/kit/tree/main/examples/nextjs).',
    )
    expect(rewrite('![The playground](docs/playground.png)')).toBe(
      '![The playground](https://raw.githubusercontent.com/acme/kit/main/docs/playground.png)',
    )
    expect(
      rewrite('[the recipes](../README.md#recipes), [map](../packages/service/src/README.md)', 'docs/evm.md'),
    ).toBe(
      '[the recipes](https://github.com/acme/kit#recipes), [map](https://github.com/acme/kit/blob/main/packages/service/src/README.md)',
    )
    expect(rewrite('[Latchkey](../../README.md)', 'packages/protocol/README.md')).toBe(
      '[Latchkey](https://github.com/acme/kit)',
    )
    // A code span in the link's text (before, the link was split at it and left relative).
    expect(rewrite('[the `<SendTransaction/>` drop-in](docs/sending.md), `[x](docs/missing.md)`')).toBe(
      '[the `<SendTransaction/>` drop-in](https://github.com/acme/kit/blob/main/docs/sending.md), `[x](docs/missing.md)`',
    )
    expect(rewrite('[ref]: docs/sending.md\n')).toBe(
      '[ref]: https://github.com/acme/kit/blob/main/docs/sending.md\n',
    )
  })

  it('keeps absolute URLs, mail, anchors and code as they are', () => {
    const kept = [
      '[npm](https://www.npmjs.com/) [mail](mailto:a@b.c) [below](#recipes)',
      '```md\n[x](docs/missing.md)\n```',
      'Write `[x](docs/missing.md)` in your docs.',
    ].join('\n')
    expect(rewrite(kept)).toBe(kept)
  })

  it('refuses a link to a path the checkout lacks, or one leaving the repository', () => {
    expect(() => rewrite('[gone](docs/gone.md)')).toThrow('docs/gone.md, which does not exist')
    expect(() => rewrite('[out](../other/README.md)')).toThrow('leaves the repository')
  })

  it('prepack rewrites a README in place and postpack puts the checkout’s back', () => {
    // A fresh `npm ci` has no node_modules/.cache yet.
    mkdirSync(path.join(root, 'node_modules/.cache'), { recursive: true })
    const dir = mkdtempSync(path.join(root, 'node_modules/.cache/absolute-links-'))
    try {
      const original = '# Pkg\n\n[Latchkey](../../../README.md) [docs](../../../docs/sending.md)\n'
      writeFileSync(path.join(dir, 'README.md'), original)
      prepareReadme(dir)
      const packed = readFileSync(path.join(dir, 'README.md'), 'utf8')
      expect(packed).toContain(`[Latchkey](${repositoryUrl()})`)
      expect(packed).toContain(`[docs](${repositoryUrl()}/blob/main/docs/sending.md)`)
      restoreReadme(dir)
      expect(readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe(original)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('every relative link of the README, the docs and the packages’ READMEs resolves', () => {
    const files = [
      'README.md',
      'packages/protocol/README.md',
      'packages/service/README.md',
      ...readdirSync(path.join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ]
    for (const file of files) {
      const text = readFileSync(path.join(root, file), 'utf8')
      expect(() => absoluteLinks(text, { file }), file).not.toThrow()
    }
    // The README links to no repository file by an absolute URL: they work in a checkout.
    expect(readFileSync(path.join(root, 'README.md'), 'utf8')).not.toMatch(
      /\]\(https:\/\/github\.com\/latchkey-dev/,
    )
  })
})
