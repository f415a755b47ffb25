import { Buffer } from 'buffer'

/**
 * The stories run the local service inside the page; its TON code (via @ton/core) expects Node's
 * global Buffer. Called from the preview, before any story module is evaluated. (A bare
 * side-effect import would be dropped: the package marks its modules side-effect free.)
 */
export function installBufferGlobal(): boolean {
  const scope = globalThis as { Buffer?: unknown }
  scope.Buffer ??= Buffer
  return true
}
