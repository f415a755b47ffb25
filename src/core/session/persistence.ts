import { SESSION_TYPES } from '@latchkey/protocol'
import type { Session } from './types.ts'

/** The subset of the Web Storage API sessions are persisted to. */
export interface LatchkeyStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** Bump when the persisted shape changes; older payloads are discarded, never misread. */
export const SESSIONS_STORAGE_VERSION = 1

/** The only session fields written to storage: metadata, never keys or bearer tokens. */
const PERSISTED_FIELDS = [
  'id',
  'sessionType',
  'userId',
  'organizationId',
  'publicKey',
  'expiresAt',
  'createdAt',
  'lifetimeSeconds',
  'method',
  'label',
] as const satisfies readonly (keyof Session)[]

export type PersistedSession = Pick<Session, (typeof PERSISTED_FIELDS)[number]>

export interface PersistedSessions {
  version: typeof SESSIONS_STORAGE_VERSION
  activeId: string | null
  sessions: PersistedSession[]
}

export const sessionsStorageKey = (organizationId: string) => `latchkey.sessions.${organizationId}`

/** Read-only sessions are not persisted: their JWT is a bearer token. */
export function serializeSessions(activeId: string | null, sessions: Session[]): string {
  const kept = sessions
    .filter((session) => session.sessionType === 'SESSION_TYPE_READ_WRITE' && session.publicKey)
    .map(
      (session) =>
        Object.fromEntries(PERSISTED_FIELDS.map((field) => [field, session[field]])) as PersistedSession,
    )
  const payload: PersistedSessions = {
    version: SESSIONS_STORAGE_VERSION,
    activeId: kept.some((session) => session.id === activeId) ? activeId : null,
    sessions: kept,
  }
  return JSON.stringify(payload)
}

const isPersistedSession = (value: unknown): value is PersistedSession => {
  const s = value as Record<string, unknown>
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.id === 'string' &&
    SESSION_TYPES.includes(s.sessionType as never) &&
    typeof s.userId === 'string' &&
    typeof s.organizationId === 'string' &&
    typeof s.publicKey === 'string' &&
    typeof s.expiresAt === 'number' &&
    typeof s.createdAt === 'number' &&
    typeof s.lifetimeSeconds === 'number' &&
    typeof s.method === 'string'
  )
}

/** Parses persisted sessions; anything unreadable or of another version yields nothing. */
export function parseSessions(text: string | null): PersistedSessions | undefined {
  if (!text) return undefined
  try {
    const value = JSON.parse(text) as Partial<PersistedSessions>
    if (value?.version !== SESSIONS_STORAGE_VERSION || !Array.isArray(value.sessions)) return undefined
    const sessions = value.sessions.filter(isPersistedSession)
    return {
      version: SESSIONS_STORAGE_VERSION,
      activeId: typeof value.activeId === 'string' ? value.activeId : null,
      sessions,
    }
  } catch {
    return undefined
  }
}

/** `localStorage` when this runtime has a working one, else nothing (SSR, blocked storage). */
export function defaultStorage(): LatchkeyStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage
  } catch {
    return null
  }
}

/** The storage a client persists to: its configured one, else `localStorage` when usable. */
export const storageOf = (config: {
  storage?: LatchkeyStorage | null | undefined
}): LatchkeyStorage | null => (config.storage === undefined ? defaultStorage() : config.storage)
