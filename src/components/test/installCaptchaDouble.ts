import type { CaptchaApi, CaptchaProvider } from '../auth/mountCaptcha.ts'

/** One widget the double rendered, as the kit asked for it. */
export interface CaptchaDoubleWidget {
  parameters: Record<string, unknown>
  container: HTMLElement
  resets: number
  removed: boolean
}

const WIDTH: Record<string, string> = { flexible: '100%', normal: '300px', compact: '150px' }

/**
 * A page that already loaded the provider's script, for tests and stories (which reach no
 * network): a double of the documented explicit-render API (`render`, `reset`, `remove`) on
 * `window.turnstile` or `window.hcaptcha`. Each widget is a box with an "I am human" button that
 * solves the check (calls `callback` with a new token, `token-1`, `token-2`, …); `failFirst`
 * makes the first widget report an error through `error-callback`, as a real one does when its
 * challenge cannot load. Returns the widgets rendered so far and a function that uninstalls it.
 */
export function installCaptchaDouble(provider: CaptchaProvider, { failFirst = false } = {}) {
  const widgets: CaptchaDoubleWidget[] = []
  let solved = 0
  const widgetOf = (id: string | number | undefined) => widgets[Number(String(id).replace('widget-', ''))]!
  const api: CaptchaApi = {
    render(container, parameters) {
      const id = widgets.length
      widgets.push({ parameters, container, resets: 0, removed: false })
      const dark = parameters.theme === 'dark'
      const box = document.createElement('div')
      box.style.cssText = `display:flex;align-items:center;gap:12px;box-sizing:border-box;max-inline-size:100%;inline-size:${WIDTH[String(parameters.size)] ?? '300px'};min-block-size:65px;padding:12px;border:1px solid ${dark ? '#3f3f46' : '#d4d4d8'};border-radius:4px;background:${dark ? '#232327' : '#fafafa'};color:${dark ? '#f4f4f5' : '#18181b'};font:14px system-ui,sans-serif`
      const button = document.createElement('button')
      button.type = 'button'
      button.textContent = 'I am human'
      button.onclick = () => {
        button.textContent = 'Verified'
        button.disabled = true
        ;(parameters.callback as (token: string) => void)(`token-${++solved}`)
      }
      const label = document.createElement('span')
      label.textContent = `${provider} (test double)`
      label.style.opacity = '0.7'
      box.append(button, label)
      container.append(box)
      if (failFirst && id === 0) (parameters['error-callback'] as (code: string) => void)('110200')
      return `widget-${id}`
    },
    reset(id) {
      const widget = widgetOf(id)
      widget.resets++
      const button = widget.container.querySelector('button')
      if (button) {
        button.textContent = 'I am human'
        button.disabled = false
      }
    },
    remove(id) {
      const widget = widgetOf(id)
      widget.removed = true
      widget.container.replaceChildren()
    },
  }
  window[provider] = api
  return {
    widgets,
    uninstall: () => {
      if (window[provider] === api) delete window[provider]
    },
  }
}
