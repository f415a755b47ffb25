import type { ConfigInvalidError } from '../core/errors.ts'

// The message's `backticked` names as code (the kit's messages quote options and commands so).
const withCode = (text: string) => {
  let offset = 0
  return text.split('`').map((part, index) => {
    const start = offset
    offset += part.length + 1
    return index % 2 === 1 ? <code key={start}>{part}</code> : part
  })
}

/**
 * What a development build renders in place of the app when `<LatchkeyProvider config>` is
 * invalid: the option at fault and where its value comes from, on the page instead of a blank one.
 * Only rendered behind the provider's development check, so production bundles leave it out.
 * Inline styles: the app's stylesheet (or the kit's) may not have loaded.
 */
export function ConfigErrorPanel({ error }: { error: ConfigInvalidError }) {
  return (
    <div
      role="alert"
      style={{
        boxSizing: 'border-box',
        maxInlineSize: 640,
        margin: 16,
        padding: '16px 20px',
        border: '1px solid #e8a5a1',
        borderRadius: 12,
        background: '#fff6f5',
        color: '#6d1a16',
        font: '15px/1.5 system-ui, sans-serif',
        overflowWrap: 'anywhere',
      }}
    >
      <strong style={{ display: 'block', marginBlockEnd: 6 }}>
        Latchkey can’t start: {error.field ? <code>{error.field}</code> : 'its config'} is not valid
      </strong>
      <p style={{ margin: 0 }}>{withCode(error.message)}</p>
      <p style={{ margin: '8px 0 0', fontSize: 13 }}>
        {withCode(
          'Running the service with `npx latchkey-service dev --env .env.local` writes every value to `.env.local`; restart the app’s dev server after it changes. This panel shows in development builds only.',
        )}
      </p>
    </div>
  )
}
