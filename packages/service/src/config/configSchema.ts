import { z } from 'zod'
import { captchaSection } from './sections/captcha.ts'
import { emailSection } from './sections/email.ts'
import { limitsSection } from './sections/limits.ts'
import { masterKeySection } from './sections/masterKey.ts'
import { oauthSection } from './sections/oauth.ts'
import { observabilitySection } from './sections/observability.ts'
import { otpSection } from './sections/otp.ts'
import { proxySection } from './sections/proxy.ts'
import { rateLimitsSection } from './sections/rateLimits.ts'
import { rpcSection } from './sections/rpc.ts'
import { sendingSection } from './sections/sending.ts'
import { serverSection } from './sections/server.ts'
import { smsSection } from './sections/sms.ts'
import { sponsorshipSection } from './sections/sponsorship.ts'
import { storageSection } from './sections/storage.ts'
import { webauthnSection } from './sections/webauthn.ts'
import { webhooksSection } from './sections/webhooks.ts'

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
  sending: sendingSection.default(sendingSection.parse({})),
  email: emailSection.optional(),
  sms: smsSection.optional(),
  oauth: oauthSection.optional(),
  otp: otpSection.optional(),
  observability: observabilitySection.default(observabilitySection.parse({})),
  rate_limits: rateLimitsSection.optional(),
  sponsorship: sponsorshipSection.optional(),
  captcha: captchaSection.optional(),
  webhooks: webhooksSection.default(webhooksSection.parse({})),
  limits: limitsSection.default(limitsSection.parse({})),
})

export type Config = z.infer<typeof configSchema>

/** What the schema says about one key, for env overrides, secrets and the docs. */
export interface ConfigKey {
  /** `['server', 'port']`; a table's keys one level deeper; a record's entries end in `<name>`. */
  path: string[]
  /** The leaf schema without its optional/default wrappers. */
  schema: z.ZodType
  description: string
  /** Marked `.meta({ secret: true })` (for a record: its values are). */
  secret: boolean
  /**
   * The environment variable that overrides it. None for a record's entries: those of a record of
   * tables are named by `entryEnvName` (`LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY`).
   */
  env: string | undefined
  default: unknown
  required: boolean
}

interface KeyMeta {
  secret?: boolean
  env?: string
  /** What a record's keys are, for the docs (`caip2` → `<caip2>`). */
  keyName?: string
}

/** Metadata of a field, its wrappers' over its own. */
const metaOf = (schema: z.ZodType): KeyMeta => ({ ...unwrap(schema).meta(), ...schema.meta() }) as KeyMeta

/** Every key of the schema, section by section (tables inside sections too), in declaration order. */
export function configKeys(): ConfigKey[] {
  const keys: ConfigKey[] = []
  const walk = (field: z.ZodType, path: string[]) => {
    const inner = unwrap(field)
    if (inner instanceof z.ZodObject) {
      for (const [name, child] of Object.entries(inner.shape as Record<string, z.ZodType>))
        walk(child, [...path, name])
      return
    }
    // A table with variants (`[sms]`: twilio or webhook): the keys of every variant, each once
    // (a key the variants share is a secret if any variant marks it one).
    if (
      inner instanceof z.ZodUnion &&
      (inner.options as z.ZodType[]).every((option) => unwrap(option) instanceof z.ZodObject)
    ) {
      for (const option of inner.options as z.ZodType[]) {
        const before = keys.length
        walk(option, path)
        const added = keys.splice(before)
        for (const key of added) {
          const same = keys.find((known) => known.path.join('.') === key.path.join('.'))
          if (!same) keys.push({ ...key, required: false })
          else if (key.secret) same.secret = true
        }
      }
      return
    }
    if (inner instanceof z.ZodRecord) {
      const value = inner.valueType as z.ZodType
      const entryName = `<${metaOf(field).keyName ?? 'name'}>`
      // A record of tables (`[sponsorship.sponsors.<name>]`): the record, then each entry's keys.
      if (unwrap(value) instanceof z.ZodObject) {
        keys.push({
          path: [...path, entryName],
          schema: unwrap(value),
          description: value.description ?? field.description ?? inner.description ?? '',
          secret: false,
          env: undefined,
          default: undefined,
          required: false,
        })
        const before = keys.length
        walk(value, [...path, entryName])
        for (const key of keys.slice(before)) key.env = undefined
        return
      }
      keys.push({
        path: [...path, entryName],
        schema: value,
        description: value.description ?? field.description ?? inner.description ?? '',
        secret: metaOf(value).secret === true,
        env: undefined,
        default: undefined,
        required: false,
      })
      return
    }
    const meta = metaOf(field)
    keys.push({
      path,
      schema: inner,
      description: field.description ?? inner.description ?? '',
      secret: meta.secret === true,
      env: meta.env ?? `LATCHKEY_${path.join('_')}`.toUpperCase(),
      default: defaultOf(field),
      required: !field.safeParse(undefined).success,
    })
  }
  for (const [section, schema] of Object.entries(configSchema.shape)) walk(schema as z.ZodType, [section])
  return keys
}

/** The description of a section or table (`['proxy']`). */
export function sectionDescription(path: string[]): string {
  const schema = schemaAt(path)
  return schema ? (schema.description ?? unwrap(schema).description ?? '') : ''
}

/** The schema of a table by its path (wrappers kept; any name of a record's entry), or undefined if there is none there. */
export function schemaAt(path: string[]): z.ZodType | undefined {
  let current: z.ZodType = configSchema
  for (const name of path) {
    const inner = unwrap(current)
    // A record's entry (`sponsorship.sponsors.default`): its value's schema.
    if (inner instanceof z.ZodRecord) {
      current = inner.valueType as z.ZodType
      continue
    }
    if (!(inner instanceof z.ZodObject)) return undefined
    const next = (inner.shape as Record<string, z.ZodType>)[name]
    if (next === undefined) return undefined
    current = next
  }
  return current
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

/**
 * The env var of one entry's key in a record of tables: the path upper-cased, the entry's name
 * with every character other than a letter or digit as `_` (`sponsorship.sponsors.<name>.private_key`
 * of `default` → `LATCHKEY_SPONSORSHIP_SPONSORS_DEFAULT_PRIVATE_KEY`).
 */
export function entryEnvName(path: string[]): string {
  return `LATCHKEY_${path.map((name) => name.replace(/[^A-Za-z0-9]/g, '_')).join('_')}`.toUpperCase()
}
