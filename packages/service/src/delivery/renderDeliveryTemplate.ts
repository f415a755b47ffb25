import { ServiceError } from '../kernel/base/errors.ts'
/** The values a delivery template may name. */
export interface DeliveryValues {
  code: string
  app_name: string
  expires_minutes: string
}

export const PLACEHOLDERS: readonly (keyof DeliveryValues)[] = ['code', 'app_name', 'expires_minutes']

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g

/** A template that names a placeholder it may not: the message names it, its field and what is allowed. */
export class TemplateError extends ServiceError {
  override name = 'TemplateError'
  constructor(
    /** Where the template is set, e.g. `email.templates.subject`. */
    readonly field: string,
    readonly placeholder: string,
  ) {
    super(
      `${field}: unknown placeholder {{${placeholder}}}; allowed: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}`,
    )
  }
}

/** Checks a template's placeholders once, at configuration; throws `TemplateError` for the first unknown one. */
export function checkTemplate(field: string, template: string): void {
  for (const [, name] of template.matchAll(PLACEHOLDER))
    if (!(PLACEHOLDERS as readonly string[]).includes(name!)) throw new TemplateError(field, name!)
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

/** Fills a checked template; `html` escapes the values. */
export function renderDeliveryTemplate(template: string, values: DeliveryValues, html = false): string {
  return template.replace(PLACEHOLDER, (_, name: keyof DeliveryValues) =>
    html ? escapeHtml(values[name]) : values[name],
  )
}
