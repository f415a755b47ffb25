// Node only: `latchkey-service init --config FILE --root-public-key HEX`: makes the production
// parent organization, its root user holding the operator's own P-256 public key as an API key (the
// operator keeps the private key; the service never sees it) and its auth-proxy configuration
// from the configuration file; prints the ids as JSON. A second run changes nothing.

import { parseArgs } from 'node:util'
import type { ProxySettings } from '@latchkey/protocol'
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js'
import type { Service } from '../assembly/createService.ts'
import { ConfigError } from '../config/ConfigError.ts'
import { FLAG_KEYS, loadConfig } from '../config/loadConfig.ts'
import { productionService } from '../config/productionService.ts'
import { proxyOptions } from '../config/sections/proxy.ts'
import { compressP256 } from '../kernel/crypto/p256.ts'
import { apiKeyInOrganization } from '../kernel/store/model.ts'
import { saveProxyConfig } from '../signin/proxyConfig.ts'
import { exitWithProblems } from './config.ts'

const NAME = 'latchkey-service'

export const INIT_USAGE = `Usage: latchkey-service init --config FILE --root-public-key HEX [options]

Makes the parent organization of a production service, once: its root user with your P-256 public
key as its API key (keep the private key; make one with
\`openssl ecparam -name prime256v1 -genkey -noout -out root.pem\` and
\`openssl ec -in root.pem -pubout -conv_form compressed -outform DER | tail -c 33 | xxd -p -c 33\`),
and its auth-proxy configuration from the [proxy] section. Prints the ids as JSON. Running it again
changes nothing and prints the same ids.

  --config <file>            the TOML configuration (default: env LATCHKEY_CONFIG)
  --root-public-key <hex>    the root user's P-256 public key, compressed (66 hex) or not (130 hex)
  --name <name>              the organization's name (default: proxy.app_name, else "Latchkey")
  --data-dir <dir>           storage.data_dir
  --database-url <url>       storage.database_url
  --help                     show this help`

/** What `init` prints. */
export interface ParentOrganizationIds {
  organizationId: string
  rootUserId: string
  rootApiKeyId: string
  authProxyConfigId: string
  trustedSignerPublicKey: string
}

/** A compressed P-256 public key in hex, or a one-line reason it is not one. */
export function readRootPublicKey(hex: string): string {
  if (!/^(0[23][0-9a-f]{64}|04[0-9a-f]{128})$/i.test(hex))
    throw new ConfigError([
      '--root-public-key must be a P-256 public key in hex: 66 characters starting 02 or 03 (compressed) or 130 starting 04',
    ])
  try {
    return bytesToHex(compressP256(hexToBytes(hex.toLowerCase())))
  } catch {
    throw new ConfigError(['--root-public-key is not a point on the P-256 curve'])
  }
}

/**
 * Makes the parent organization once; later calls with the same key return the same ids and write
 * nothing. A different key is refused: the organization has its root already.
 */
export async function initParentOrganization(
  service: Service,
  options: { rootPublicKey: string; name: string; settings: Partial<ProxySettings> },
): Promise<ParentOrganizationIds> {
  const { runtime } = service
  await runtime.store.transaction(async (tx) => {
    const row = await tx.get('service', 'service')
    if (!row) throw new Error('the service keys are missing')
    if (row.parentOrganizationId !== undefined) return
    const now = runtime.now()
    const organizationId = runtime.newId()
    const userId = runtime.newId()
    const apiKeyId = runtime.newId()
    await tx.put('organizations', {
      id: organizationId,
      name: options.name,
      rootUserIds: [userId],
      rootQuorumThreshold: 1,
      createdAt: now,
      updatedAt: now,
    })
    await tx.put('users', { id: userId, organizationId, userName: 'Root', createdAt: now, updatedAt: now })
    await tx.put('apiKeys', {
      id: apiKeyId,
      organizationId,
      userId,
      name: 'Root key',
      publicKey: options.rootPublicKey,
      keyInOrganization: apiKeyInOrganization(options.rootPublicKey, organizationId),
      curve: 'API_KEY_CURVE_P256',
      credentialType: 'CREDENTIAL_TYPE_API_KEY_P256',
      createdAt: now,
      updatedAt: now,
    })
    const config = await saveProxyConfig(tx, runtime, organizationId, { ...options.settings, enabled: true })
    await tx.put('service', {
      ...row,
      parentOrganizationId: organizationId,
      parentRootUserId: userId,
      parentRootApiKeyId: apiKeyId,
      authProxyConfigId: config.id,
      updatedAt: now,
    })
  })
  await runtime.loadServiceRow()
  const row = runtime.serviceRow
  const apiKey = await runtime.store.get('apiKeys', row.parentRootApiKeyId!)
  if (apiKey?.publicKey !== options.rootPublicKey)
    throw new ConfigError([
      `--root-public-key: this database's parent organization ${row.parentOrganizationId} was made with another root key (${apiKey?.publicKey ?? 'none'}); nothing was changed`,
    ])
  return {
    organizationId: row.parentOrganizationId!,
    rootUserId: row.parentRootUserId!,
    rootApiKeyId: row.parentRootApiKeyId!,
    authProxyConfigId: row.authProxyConfigId!,
    trustedSignerPublicKey: row.signerPublicKey,
  }
}

export async function run(argv: string[]): Promise<void> {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string' },
        'root-public-key': { type: 'string' },
        name: { type: 'string' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values
  } catch (error) {
    process.stderr.write(`${NAME}: ${(error as Error).message}\n\n${INIT_USAGE}\n`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(`${INIT_USAGE}\n`)
    return
  }
  let service: Service | undefined
  try {
    if (typeof values['root-public-key'] !== 'string')
      throw new ConfigError(['--root-public-key is required: the P-256 public key of the root user, in hex'])
    const rootPublicKey = readRootPublicKey(values['root-public-key'])
    const flags: Record<string, string | undefined> = {}
    for (const flag of ['data-dir', 'database-url'])
      flags[FLAG_KEYS[flag]!] = values[flag] as string | undefined
    const { config } = loadConfig({
      file: (values.config as string | undefined) ?? (process.env.LATCHKEY_CONFIG || undefined),
      flags,
    })
    service = await productionService(config, { applyProxySettings: false })
    const ids = await initParentOrganization(service, {
      rootPublicKey,
      name: (values.name as string | undefined) ?? config.proxy.app_name ?? 'Latchkey',
      settings: proxyOptions(config.proxy),
    })
    process.stdout.write(`${JSON.stringify(ids)}\n`)
  } catch (error) {
    await service?.close()
    if (error instanceof ConfigError) exitWithProblems(error.problems)
    throw error
  }
  await service.close()
}
