// What a card or a step says while its query loads, when it failed, and where a step announces its error.
import { Alert } from './Alert.tsx'
import { ErrorText, MessageText } from './ErrorText.tsx'
import { Button, Spinner } from './parts.tsx'
import type { Ui } from './useUi.ts'

/** A card's "Loading…" line while its query has not answered (announced as a status). */
export function Loading({ ui }: { ui: Ui }) {
  return (
    <p className="lk-row lk-muted" role="status" style={{ margin: 0 }}>
      <Spinner />
      {ui.t('loading')}
    </p>
  )
}

/** A card whose query failed: what went wrong, in words, and "Retry". */
export function LoadFailed({ ui, error, retry }: { ui: Ui; error: unknown; retry: () => void }) {
  return (
    <Alert
      tone="error"
      action={
        <Button size="sm" variant="secondary" onClick={retry}>
          {ui.t('retry')}
        </Button>
      }
    >
      <ErrorText ui={ui} error={error} />
    </Alert>
  )
}

/**
 * The live region a step's error is announced in (`id` is what its field's `aria-describedby`
 * names): `message` when the step words it itself, else the kit's sentence for `error`.
 */
export function ErrorRegion({
  id,
  ui,
  error,
  message,
}: {
  id: string
  ui: Ui
  error: unknown
  message?: string | null | undefined
}) {
  return (
    <div aria-live="assertive" id={id}>
      {error ? (
        <Alert tone="error">
          {message ? <MessageText text={message} /> : <ErrorText ui={ui} error={error} />}
        </Alert>
      ) : null}
    </div>
  )
}
