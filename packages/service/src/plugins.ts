import { secretFramePlugin } from './dev/secretFrame.ts'
import { signInPlugin } from './proxy/signInPlugin.ts'
import type { ServicePlugin } from './registry.ts'

/**
 * Plugins every service loads (the auth proxy, OTP, OAuth, dev routes and settings add theirs
 * here). `createService({ plugins })` appends more after these.
 */
export const builtinPlugins: ServicePlugin[] = [secretFramePlugin, signInPlugin]
