import { z } from 'zod'
import { type ConfigKey, configKeys, configSchema, sectionDescription, unwrap } from './configSchema.ts'

/** `docs/configuration.md`, generated from the schema (a test keeps the committed file current). */
export function configurationMarkdown(): string {
  const keys = configKeys()
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from packages/service/src/config/ by `latchkey-service config docs`; do not edit by hand. -->',
    '',
    '`latchkey-service start --config FILE` and `init --config FILE` read one TOML file (or the',
    '`LATCHKEY_CONFIG` env var names it). Every key may also be set by its env var, which wins over the',
    "file; `--host`, `--port`, `--data-dir` and `--database-url` (and `start`'s `--master-key-file` and",
    '`--new-master-key-file`, for `master_key.key_file` and `next_key_file`) win over both.',
    '`latchkey-service config check --config FILE` prints the effective configuration (with the',
    'defaults `start` applies) with secrets redacted, lists every problem and exits with 2 if there is',
    'one. Unknown keys are errors.',
    '',
    '**Secrets** (marked 🔒) may be given three ways: `<key>_file = "/path"` in the file (the file holds',
    'the value; a trailing newline is ignored), the env var, or the env var with `_FILE` appended (a path).',
    "The env var of an entry's secret names the entry upper-cased, every character other than a letter or",
    'digit as `_` (`sponsors.default.private_key`: `LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY`); an',
    'entry the file does not have is read as that name lower-cased with `_` as `-`.',
    'A secret written inline in a configuration file that every local user can read is refused:',
    'anyone on the machine could already copy it, and refusing makes that visible before it is used.',
    'A secret file (`<key>_file`, `_FILE`, `--master-key-file`) that every local user can read is read,',
    'with a warning from `config check` and `start` naming it and its mode: `chmod 600` it, owned by the',
    "service's user. Not a refusal, since a Docker or Kubernetes secret is mounted 0444 by default and is",
    'readable only inside its container.',
    '',
  ]
  for (const section of Object.keys(configSchema.shape)) {
    lines.push(`## \`[${section}]\``, '', sectionDescription([section]), '')
    lines.push('| key | type | default | env | description |', '| --- | --- | --- | --- | --- |')
    for (const key of keys.filter((candidate) => candidate.path[0] === section)) lines.push(row(key))
    lines.push('')
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`
}

function row(key: ConfigKey): string {
  const name = `\`${key.path.slice(1).join('.')}\`${key.secret ? ' 🔒' : ''}`
  // A secret of a record's entries: its env var names the entry (`…_SPONSORS_<NAME>_PRIVATE_KEY`).
  const envName =
    key.env ??
    (key.secret && key.path.some((name) => name.startsWith('<'))
      ? `LATCHKEY_${key.path.join('_').toUpperCase()}`
      : undefined)
  const env = envName ? `\`${envName}\`${key.secret ? `, \`${envName}_FILE\`` : ''}` : ''
  const fallback = key.default === undefined ? '' : `\`${JSON.stringify(key.default)}\``
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
  return `| ${name} | ${cell(typeName(key.schema))} | ${cell(fallback)} | ${env} | ${cell(key.description)} |`
}

function typeName(schema: z.ZodType): string {
  const inner = unwrap(schema)
  if (inner instanceof z.ZodArray) return `array of ${typeName(inner.element as z.ZodType)}`
  if (inner instanceof z.ZodEnum) return (inner.options as string[]).map((o) => `"${o}"`).join(' | ')
  if (inner instanceof z.ZodUnion)
    return (inner.options as z.ZodType[]).map((option) => typeName(option)).join(' or ')
  if (inner instanceof z.ZodRecord) return `table of ${typeName(inner.valueType as z.ZodType)}`
  if (inner instanceof z.ZodNumber) return inner.format === 'safeint' ? 'integer' : 'number'
  return inner.def.type
}
