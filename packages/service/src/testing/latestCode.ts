import type { Service } from '../assembly/createService.ts'

/**
 * The newest one-time code the service "sent" to `contact`, read from its dev outbox (the only
 * place a code is ever written). Throws when nothing was sent.
 */
export async function latestCode(service: Pick<Service, 'app'>, contact: string): Promise<string> {
  const response = await service.app.request(`/dev/outbox.json?contact=${encodeURIComponent(contact)}`)
  const { messages } = (await response.json()) as { messages: { code: string }[] }
  if (!messages[0]) throw new Error(`no code sent to ${contact}`)
  return messages[0].code
}
