/**
 * Characters that show as nothing or reorder what follows: zero-width ones (U+200B–U+200D, the
 * word joiner and invisible operators U+2060–U+2064, U+FEFF, the soft hyphen U+00AD, U+180E) and
 * bidirectional controls (U+200E, U+200F, U+061C, U+202A–U+202E, U+2066–U+2069). `payload\u200d`
 * reads as `payload`; `Pay \u202E1000\u202C USDC` reads as `Pay 0001 USDC`.
 */
export const HIDDEN = /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/
/** `HIDDEN`, every match (to mark them one by one). */
export const HIDDEN_ALL = new RegExp(HIDDEN.source, 'g')
