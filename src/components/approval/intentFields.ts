import { activityParameters } from '@latchkey/protocol'
import { HIDDEN } from '../ui/hiddenChars.ts'

/** One field of an activity's parameters, as text. */
export interface IntentField {
  name: string
  value: string
  /** Its name or value holds a character that shows as nothing or reorders the text (`HIDDEN`, ui/hiddenChars.ts). */
  hidden: boolean
}

export interface IntentFields {
  /** The parameters the protocol names for the activity's type, in its order, values in full. */
  known: IntentField[]
  /**
   * Every other field, in the order submitted: the service stores them but does not read them.
   * A value longer than `SHOWN` keeps its start and end, and says how long it is.
   */
  other: IntentField[]
  /** False for a type the kit does not know (a newer service's): then every field is in `other`. */
  knownType: boolean
}

/** Longest value of another field shown whole; a longer one shows its start and end, and how long it is. */
export const SHOWN = 400

const textOf = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Array.isArray(value) && value.every((item) => typeof item !== 'object' || item === null)
      ? value.join(', ')
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value)

const shorten = (text: string) =>
  text.length <= SHOWN
    ? text
    : `${text.slice(0, SHOWN / 2)}…${text.slice(-SHOWN / 2)} (${text.length.toLocaleString('en')})`

// An empty value is shown as `""`, so that a field set to nothing is seen to be there.
const field = (name: string, value: unknown, shown: (text: string) => string): IntentField => {
  const text = textOf(value)
  return { name, value: text === '' ? '""' : shown(text), hidden: HIDDEN.test(name) || HIDDEN.test(text) }
}

/**
 * What an activity (`type`, `intent` as the service answers them: `{ signRawPayloadIntentV2: { … } }`)
 * would do, as text an approver reads: the parameters its type has, in full and in the protocol's
 * order, then whatever else the requester put in `parameters`, apart. The service stores
 * `parameters` as submitted, unknown names included, so a requester can add fields named like the
 * real ones (`payload\u200d`) with other values: they are never among `known`, and never first.
 */
export function intentFields(type: string, intent: Record<string, unknown>): IntentFields {
  const read = activityParameters(type, intent)
  if (!read) {
    const parameters = Object.entries(intent).find(([key]) => /Intent(V\d+)?$/.test(key))?.[1]
    const entries =
      typeof parameters === 'object' && parameters !== null && !Array.isArray(parameters)
        ? Object.entries(parameters)
        : []
    return {
      known: [],
      other: entries.map(([name, value]) => field(name, value, shorten)),
      knownType: false,
    }
  }
  const { parameters, names } = read
  const known = new Set(names)
  return {
    known: names
      .filter((name) => Object.hasOwn(parameters, name) && parameters[name] !== undefined)
      .map((name) => field(name, parameters[name], (text) => text)),
    other: Object.entries(parameters)
      .filter(([name]) => !known.has(name))
      .map(([name, value]) => field(name, value, shorten)),
    knownType: true,
  }
}
