/** `latchkey`: the React provider, hooks and drop-in components. */

export * from './components/index.ts'
export * from './react/index.ts'
