export { ar } from './ar.ts'
export { en, type MessageKey, type Messages } from './en.ts'
export { es } from './es.ts'
export {
  BUILT_IN_LOCALES,
  type BuiltInLocale,
  createTranslate,
  directionOf,
  loadMessages,
  preloadMessages,
  type Translate,
} from './messages.ts'
