/** Values a message template may use as `{{name}}`. */
export interface TemplateValues {
  code: string
  appName: string
  expiresInMinutes: string | number
}

/**
 * Fills `{{code}}`, `{{appName}}` and `{{expiresInMinutes}}` (spaces inside the braces allowed).
 * Unknown placeholders are left as written so an operator sees their typo in the outbox.
 */
export function renderTemplate(template: string, values: TemplateValues): string {
  return template.replace(/\{\{\s*(code|appName|expiresInMinutes)\s*\}\}/g, (_, name: keyof TemplateValues) =>
    String(values[name]),
  )
}

export const DEFAULT_EMAIL_TEMPLATE = {
  subject: 'Your {{appName}} sign-in code',
  body: 'Your {{appName}} sign-in code is {{code}}. It expires in {{expiresInMinutes}} minutes. If you did not ask for it, ignore this message.',
}

export const DEFAULT_SMS_TEMPLATE = {
  body: '{{code}} is your {{appName}} sign-in code. It expires in {{expiresInMinutes}} minutes.',
}
