import { useEffect, useRef, useState } from 'react'
import { Alert } from '../ui/Alert.tsx'
import { Button } from '../ui/parts.tsx'
import { useAuthFlowContext } from './AuthFlowContext.ts'
import type { CaptchaHandle } from './mountCaptcha.ts'

/**
 * Moves focus to the CAPTCHA of the form or step `from` is in (the widget is a third-party frame,
 * so its labelled container takes focus): where a send button points while the check is unsolved.
 * The form comes first, so an `EmailStep` placed in a custom layout finds its own check.
 */
export function focusCaptcha(from: Element): void {
  from.closest('form, .lk-panel')?.querySelector<HTMLElement>('.lk-captcha')?.focus()
}

/**
 * The CAPTCHA the proxy configuration enables (`flow.captcha`), placed before the button that
 * sends a code; nothing when none is enabled. The widget's code and the provider's script load
 * only once this renders. Its token goes to the flow, which sends and spends it; the widget then
 * resets for a new check. A script that does not load or a widget error shows a message with
 * "Try again", which renders the widget anew.
 */
export function CaptchaField() {
  const { ui, captcha } = useAuthFlowContext()
  const container = useRef<HTMLDivElement>(null)
  const handle = useRef<CaptchaHandle>(undefined)
  const [failed, setFailed] = useState(false)
  const [attempt, setAttempt] = useState(0)
  const setToken = useRef(captcha?.setToken)
  setToken.current = captcha?.setToken
  const provider = captcha?.provider
  const siteKey = captcha?.siteKey
  const theme = ui.rootProps['data-lk-theme']

  // biome-ignore lint/correctness/useExhaustiveDependencies: `attempt` renders the widget anew on "Try again"
  useEffect(() => {
    const el = container.current
    if (!provider || !siteKey || !el) return
    let live = true
    const fail = () => live && setFailed(true)
    setFailed(false)
    import('./mountCaptcha.ts')
      .then(({ mountCaptcha }) =>
        mountCaptcha(el, {
          provider,
          siteKey,
          theme,
          onToken: (token) => {
            if (!live) return
            setToken.current?.(token)
            // The provider may recover by itself (Turnstile retries): a token clears the message.
            if (token) setFailed(false)
          },
          onError: fail,
        }),
      )
      .then((mounted) => {
        if (live) handle.current = mounted
        else mounted.remove()
      }, fail)
    return () => {
      live = false
      handle.current?.remove()
      handle.current = undefined
      setToken.current?.(null)
    }
  }, [provider, siteKey, theme, attempt])

  // A sent token is spent: the flow clears it and the widget asks for a new check.
  const token = captcha?.token
  useEffect(() => {
    if (!token) handle.current?.reset()
  }, [token])

  if (!captcha) return null
  return (
    <div className="lk-stack" data-gap="sm">
      {/* biome-ignore lint/a11y/useSemanticElements: it holds the provider's frame, not form controls of ours */}
      <div
        ref={container}
        className="lk-captcha"
        role="group"
        aria-label={ui.t('captchaLabel')}
        tabIndex={-1}
        style={{ maxInlineSize: '100%' }}
      />
      {failed ? (
        <Alert
          tone="error"
          action={
            <Button
              variant="secondary"
              size="sm"
              onClick={() => {
                setAttempt((n) => n + 1)
                // The button goes away with the message: focus stays on the check it retries.
                container.current?.focus()
              }}
            >
              {ui.t('retry')}
            </Button>
          }
        >
          {ui.t('captchaFailed')}
        </Alert>
      ) : null}
    </div>
  )
}
