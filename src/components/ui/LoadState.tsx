import { Alert } from './Alert.tsx'
import { ErrorText } from './ErrorText.tsx'
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
