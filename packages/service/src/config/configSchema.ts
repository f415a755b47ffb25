import { z } from 'zod'
import { masterKeySection } from './sections/masterKey.ts'
import { proxySection } from './sections/proxy.ts'
import { rpcSection } from './sections/rpc.ts'
import { serverSection } from './sections/server.ts'
import { storageSection } from './sections/storage.ts'
import { webauthnSection } from './sections/webauthn.ts'

/**
 * The operator's configuration file (TOML), one table per section. Every section may be left out
 * (its defaults apply); a key no section knows is an error.
 */
export const configSchema = z.strictObject({
  server: serverSection.default(serverSection.parse({})),
  storage: storageSection.default({}),
  master_key: masterKeySection.default({}),
  proxy: proxySection.default(proxySection.parse({})),
  webauthn: webauthnSection.default({}),
  rpc: rpcSection,
})

export type Config = z.infer<typeof configSchema>

/** What the schema says about one key, for env overrides, secrets and the docs. */
export interface ConfigKey {
  /** `['server', 'port']`; a record's entries are `['rpc', '<caip2>']`. */
  path: [string, string]
  /** The leaf schema without its optional/default wrappers. */
  schema: z.ZodType
  description: string
  secret: boolean
  /** The environment variable that overrides it (none for a record's entries). */
  env: string | undefined
  default: unknown
  required: boolean
}

interface KeyMeta {
  secret?: boolean
  env?: string
}

/** Every key of the schema, section by section, in declaration order. */
export function configKeys(): ConfigKey[] {
  const keys: ConfigKey[] = []
  for (const [section, wrapped] of Object.entries(configSchema.shape)) {
    const sectionSchema = unwrap(wrapped)
    if (sectionSchema instanceof z.ZodObject) {
      for (const [name, field] of Object.entries(sectionSchema.shape as Record<string, z.ZodType>)) {
        const meta = (field.meta() ?? {}) as KeyMeta
        keys.push({
          path: [section, name],
          schema: unwrap(field),
          description: field.description ?? '',
          secret: meta.secret === true,
          env: meta.env ?? `LATCHKEY_${section}_${name}`.toUpperCase(),
          default: defaultOf(field),
          required: !field.safeParse(undefined).success,
        })
      }
    } else
      keys.push({
        path: [section, '<caip2>'],
        schema: sectionSchema,
        description: 'The http(s) URL of the node for that chain.',
        secret: false,
        env: undefined,
        default: undefined,
        required: false,
      })
  }
  return keys
}

/** The description of a section (its table in the file). */
export function sectionDescription(section: string): string {
  const schema = (configSchema.shape as Record<string, z.ZodType>)[section]
  return schema ? (schema.description ?? unwrap(schema).description ?? '') : ''
}

/** The schema inside `.optional()` / `.default()` wrappers. */
export function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault)
    current = current.def.innerType as z.ZodType
  return current
}

function defaultOf(schema: z.ZodType): unknown {
  const parsed = schema.safeParse(undefined)
  return parsed.success ? parsed.data : undefined
}
