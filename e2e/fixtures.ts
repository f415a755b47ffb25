// Shared fixtures and helpers for the specs: the stack started by scripts/e2e.mjs, the dev
// outbox, a CDP virtual authenticator, an injected EIP-6963 wallet backed by a real key, and axe.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { bytesToHex, hexToBytes, randomBytes } from '@noble/hashes/utils.js'
import { test as base, expect, type Page } from '@playwright/test'
import { addr, eip191Signer } from 'micro-eth-signer'
import { pastRightEdge } from '../scripts/overflow.mjs'

export interface StackService {
  baseUrl: string
  authProxyUrl: string
  organizationId: string
  authProxyConfigId: string
  apiPublicKey: string
  apiPrivateKey: string
}

export interface Stack {
  playgroundUrl: string
  /** The same playground on 127.0.0.1: an origin the services do not allow. */
  foreignPlaygroundUrl: string
  evm: { url: string; chainId: number; caip2: string }
  services: Record<'default' | 'short' | 'brief' | 'operator', StackService>
}

export function readStack(): Stack {
  const raw = process.env.LATCHKEY_E2E_STACK
  if (!raw) throw new Error('LATCHKEY_E2E_STACK is not set: run the specs with `npm run test:e2e`.')
  return JSON.parse(raw) as Stack
}

export const stack = readStack()

/** A fresh e-mail address per call, so parallel specs never share a user. */
export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${bytesToHex(randomBytes(5))}@example.test`
}

/** A fresh US number (+1 201 555 XXXX), as national digits and E.164. */
export function uniquePhone(): { national: string; e164: string } {
  const digits = Array.from(randomBytes(4), (b) => (b % 10).toString()).join('')
  return { national: `201555${digits}`, e164: `+1201555${digits}` }
}

interface OutboxMessage {
  otpId: string
  otpType: string
  contact: string
  code: string
  subject: string
  body: string
  sentAt: string
}

/** The ids of the OTP codes sent to `contact` so far (`readOtpCode`'s `seen`). */
export async function sentOtpIds(service: StackService, contact: string): Promise<Set<string>> {
  const response = await fetch(`${service.baseUrl}/dev/outbox`)
  const { messages } = (await response.json()) as { messages: OutboxMessage[] }
  return new Set(messages.filter((m) => m.contact === contact).map((m) => m.otpId))
}

/**
 * The newest OTP code sent to `contact` after `since` (epoch ms), read from the service's dev
 * outbox; polls briefly because delivery is asynchronous from the page's point of view. A code
 * among `seen` (sent before the step that asks for a new one) is never the answer: within the
 * second of slack `since` allows, an earlier code of the same contact (an account made just
 * before) was read before the new one arrived, and the page was given a spent code.
 */
export async function readOtpCode(
  service: StackService,
  contact: string,
  since = 0,
  timeoutMs = 10_000,
  seen: ReadonlySet<string> = new Set(),
): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const response = await fetch(`${service.baseUrl}/dev/outbox`)
    const { messages } = (await response.json()) as { messages: OutboxMessage[] }
    const mine = messages
      .filter((m) => m.contact === contact && !seen.has(m.otpId) && Date.parse(m.sentAt) >= since - 1000)
      .sort((a, b) => Date.parse(b.sentAt) - Date.parse(a.sentAt))
    if (mine[0]) return mine[0].code
    if (Date.now() > deadline) throw new Error(`no OTP for ${contact} in the outbox after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Opens the playground against one of the stack's services. */
export async function openPlayground(page: Page, service: keyof Stack['services'] = 'default', path = '/') {
  const url = new URL(path, stack.playgroundUrl)
  if (service !== 'default') url.searchParams.set('service', service)
  await page.goto(url.toString())
  // The app renders once its config has been fetched, after the load event: wait for its page.
  await page.locator('main').first().waitFor()
}

/**
 * Adds a CTAP2 platform authenticator through the Chrome DevTools Protocol, so passkey
 * ceremonies complete without a person (user presence and verification simulated).
 */
export async function addVirtualAuthenticator(page: Page) {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable', { enableUI: false })
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  return {
    authenticatorId,
    async credentials() {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
      return credentials
    },
  }
}

/**
 * Injects an EIP-1193 provider announced through EIP-6963 ("E2E Wallet"). Its signatures are
 * made in Node with a real secp256k1 key (micro-eth-signer over @noble/curves), so the page
 * never holds the key and the service verifies real EIP-191 signatures.
 */
export async function injectEthereumWallet(page: Page, privateKeyHex = bytesToHex(randomBytes(32))) {
  const privateKey = `0x${privateKeyHex.replace(/^0x/, '')}`
  const address = addr.fromPrivateKey(privateKey)
  const requests: { method: string; params: unknown }[] = []
  await page.exposeFunction('__latchkeyE2eWallet', async (method: string, params: unknown[] = []) => {
    requests.push({ method, params })
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [address]
      case 'eth_chainId':
        return `0x${stack.evm.chainId.toString(16)}`
      case 'wallet_switchEthereumChain':
        return null
      case 'personal_sign': {
        const [message, from] = params as [string, string]
        if (from && from.toLowerCase() !== address.toLowerCase()) throw new Error(`unknown account ${from}`)
        const bytes = /^0x([0-9a-fA-F]{2})*$/.test(message) ? hexToBytes(message.slice(2)) : message
        return eip191Signer.sign(bytes, privateKey, false)
      }
      default:
        throw new Error(`E2E Wallet does not support ${method}`)
    }
  })
  await page.addInitScript(() => {
    type Bridge = (method: string, params?: unknown[]) => Promise<unknown>
    const listeners = new Map<string, Set<(...args: unknown[]) => void>>()
    const provider = {
      isE2EWallet: true,
      request: ({ method, params }: { method: string; params?: unknown[] }) =>
        (window as unknown as { __latchkeyE2eWallet: Bridge }).__latchkeyE2eWallet(method, params ?? []),
      on(event: string, fn: (...args: unknown[]) => void) {
        if (!listeners.has(event)) listeners.set(event, new Set())
        listeners.get(event)!.add(fn)
        return provider
      },
      removeListener(event: string, fn: (...args: unknown[]) => void) {
        listeners.get(event)?.delete(fn)
        return provider
      },
    }
    const icon =
      'data:image/svg+xml;base64,' +
      btoa(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#7c3aed"/></svg>',
      )
    const info = Object.freeze({
      uuid: '5f1c8e0c-3b7a-4f5e-9a51-6e2e0e2e0e2e',
      name: 'E2E Wallet',
      icon,
      rdns: 'test.latchkey.e2e',
    })
    const announce = () =>
      window.dispatchEvent(
        new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }),
      )
    window.addEventListener('eip6963:requestProvider', announce)
    announce()
  })
  return { address, privateKey, requests }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** Runs axe-core (WCAG 2.x A/AA rules) on the current page and fails with the violations listed. */
export async function expectNoAxeViolations(page: Page, screen: string) {
  const hasAxe = await page.evaluate(() => 'axe' in window)
  if (!hasAxe) await page.addScriptTag({ content: axeSource })
  const violations = await page.evaluate(async () => {
    interface AxeNode {
      target: string[]
      failureSummary?: string
    }
    interface AxeViolation {
      id: string
      impact?: string
      help: string
      nodes: AxeNode[]
    }
    const axe = (
      window as unknown as {
        axe: { run: (context: unknown, options: unknown) => Promise<{ violations: AxeViolation[] }> }
      }
    ).axe
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')} — ${n.failureSummary ?? ''}`),
    }))
  })
  expect(violations, `axe violations on "${screen}":\n${JSON.stringify(violations, null, 2)}`).toEqual([])
}

/**
 * Fails when the page scrolls sideways, naming the elements that stick out past the right edge
 * (the innermost ones first, `pastRightEdge`), so a failure says what to fix.
 */
export async function expectNoHorizontalScroll(page: Page, screen: string) {
  const result = await page.evaluate(pastRightEdge)
  expect(
    result.scrollWidth,
    `"${screen}" is ${result.scrollWidth - result.width}px wider than the ${result.width}px screen: ${result.offenders.join(', ')}`,
  ).toBeLessThanOrEqual(result.width)
}

/**
 * The page as it is now (results, hashes, lists shown), narrowed to a 320 px phone: fails naming what
 * sticks out (`expectNoHorizontalScroll`), then restores the viewport.
 */
export async function expectFitsPhone(page: Page, screen: string) {
  const before = page.viewportSize()
  await page.setViewportSize({ width: 320, height: before?.height ?? 800 })
  await expectNoHorizontalScroll(page, `${screen}, at 320 px`)
  if (before) await page.setViewportSize(before)
}

export const test = base
export { expect }
