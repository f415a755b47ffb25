// Vite's `?url` imports (the in-page service's WASM file).
declare module '*?url' {
  const url: string
  export default url
}
