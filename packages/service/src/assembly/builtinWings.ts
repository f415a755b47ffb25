import { secretFramePlugin } from '../frames/secretFrame.ts'
import type { ServicePlugin } from '../kernel/registry.ts'
import { signInPlugin } from '../signin/signInPlugin.ts'

/**
 * Plugins every service loads (the auth proxy, OTP, OAuth, dev routes and settings add theirs
 * here). `createService({ plugins })` appends more after these.
 */
export const builtinPlugins: ServicePlugin[] = [secretFramePlugin, signInPlugin]
