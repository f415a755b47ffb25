import { describe, expect, it } from 'vitest'
import { emailOptions, emailSection } from './email.ts'
import { smsOptions, smsSection } from './sms.ts'

const issues = (result: {
  success: boolean
  error?: { issues: { path: PropertyKey[]; message: string }[] }
}) => result.error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)

describe('[email] and [sms] sections', () => {
  it('maps a valid [email] to the delivery options, with defaults', () => {
    const parsed = emailSection.parse({
      host: 'smtp.example.com',
      user: 'u',
      password: 'p',
      from: 'Acme <codes@acme.test>',
      templates: { subject: '{{app_name}} code' },
    })
    expect(emailOptions(parsed)).toEqual({
      host: 'smtp.example.com',
      port: 587,
      tls: 'starttls',
      user: 'u',
      password: 'p',
      from: 'Acme <codes@acme.test>',
      templates: { subject: '{{app_name}} code' },
    })
  })

  it('names each bad [email] key: unknown keys, wrong types, a missing password, an unknown placeholder', () => {
    const result = emailSection.safeParse({
      host: 'smtp.example.com',
      port: '25',
      tls: 'ssl',
      user: 'u',
      from: 'codes@acme.test',
      templates: { text: 'Hi {{name}}' },
      hots: 'typo',
    })
    const found = issues(result)!.join('\n')
    for (const expected of [
      'port',
      'tls',
      'templates.text: email.templates.text: unknown placeholder {{name}}',
      'hots',
    ])
      expect(found).toContain(expected)
    const noPassword = issues(emailSection.safeParse({ host: 'h', user: 'u', from: 'codes@acme.test' }))
    expect(noPassword).toEqual(['password: email.user is set: email.password is required'])
  })

  it('maps [sms] for Twilio and the webhook, and refuses bad URLs and short secrets', () => {
    expect(
      smsOptions(
        smsSection.parse({ provider: 'twilio', account_sid: 'AC1', auth_token: 't', from: '+15005550006' }),
      ),
    ).toEqual({ provider: 'twilio', accountSid: 'AC1', authToken: 't', from: '+15005550006' })
    expect(
      smsOptions(
        smsSection.parse({
          provider: 'webhook',
          url: 'https://sms.example.com/hook',
          secret: 'a-long-enough-secret',
          template: '{{code}}',
        }),
      ),
    ).toEqual({
      provider: 'webhook',
      url: 'https://sms.example.com/hook',
      secret: 'a-long-enough-secret',
      template: '{{code}}',
    })
    const bad = issues(smsSection.safeParse({ provider: 'webhook', url: 'ftp://x', secret: 'short' }))!.join(
      '\n',
    )
    expect(bad).toContain('url: sms.url must be an http(s) URL')
    expect(bad).toContain('secret')
    expect(issues(smsSection.safeParse({ provider: 'pigeon' }))).toHaveLength(1)
  })

  it('marks the secrets for redaction', () => {
    expect(emailSection.shape.password.unwrap().meta()).toMatchObject({ secret: true })
    const [twilio, webhook] = smsSection.options
    expect(twilio.shape.auth_token.meta()).toMatchObject({ secret: true })
    expect(webhook.shape.secret.meta()).toMatchObject({ secret: true })
    expect(emailSection.shape.host.meta()).not.toMatchObject({ secret: true })
  })
})
