import { render, screen } from '@testing-library/react'
import { Suspense, version } from 'react'
import { describe, expect, it } from 'vitest'
import { joinStrings } from '../i18n/joinStrings.ts'
import { authStrings } from '../i18n/sections/auth.ts'
import { codeStrings } from '../i18n/sections/code.ts'
import { limitsStrings } from '../i18n/sections/limits.ts'
import { readStrings, type Strings } from '../i18n/strings.ts'
import { LatchkeyUIProvider } from './LatchkeyUIProvider.tsx'
import { uiStrings } from './uiStrings.ts'
import { useStrings } from './useStrings.ts'
import { type Ui, useUi } from './useUi.ts'

function Probe({ locale }: { locale: string }) {
  const ui = useUi({ locale }, uiStrings)
  return (
    <p {...ui.rootProps} data-testid="probe">
      {ui.t('signIn')}
    </p>
  )
}

// Runs in both the `dom` (React 19) and `dom-react18` projects. Each test file has its own module
// state, so the dictionaries are not loaded yet: the first render suspends on the lazy load.
describe(`useUi on React ${version}`, () => {
  it('suspends while a built-in dictionary loads, then renders it (Spanish)', async () => {
    render(
      <Suspense fallback={<p>loading</p>}>
        <Probe locale="es" />
      </Suspense>,
    )
    expect(screen.getByText('loading')).toBeTruthy()
    const probe = await screen.findByTestId('probe')
    expect([probe.textContent, probe.getAttribute('lang'), probe.getAttribute('dir')]).toEqual([
      'Iniciar sesión',
      'es',
      'ltr',
    ])
  })

  it('renders Arabic right to left, and a loaded dictionary synchronously on the next mount', async () => {
    const first = render(
      <Suspense fallback={<p>loading</p>}>
        <Probe locale="ar" />
      </Suspense>,
    )
    const probe = await screen.findByTestId('probe')
    expect(probe.getAttribute('dir')).toBe('rtl')
    const text = probe.textContent
    first.unmount()
    render(
      <Suspense fallback={<p>loading</p>}>
        <Probe locale="ar" />
      </Suspense>,
    )
    expect(screen.queryByText('loading')).toBeNull()
    expect(screen.getByTestId('probe').textContent).toBe(text)
  })

  it("loads a drop-in's own strings, not every screen's; a lazy step adds its own, overrides included", async () => {
    const limitsUi = joinStrings(uiStrings, limitsStrings)
    function Step({ ui: screen }: { ui: Ui<'cancel'> }) {
      const ui = useStrings(screen, codeStrings)
      return <span data-testid="step">{`${ui.t('mfaVerify')} · ${ui.t('cancel')}`}</span>
    }
    function Limits() {
      const ui = useUi({}, limitsUi)
      return (
        <p {...ui.rootProps} data-testid="limits">
          {ui.t('limitsTitle')}
          <Step ui={ui} />
        </p>
      )
    }
    render(
      <LatchkeyUIProvider locale="es" messages={{ mfaVerify: 'Comprobar' }}>
        <Suspense fallback={<p>loading</p>}>
          <Limits />
        </Suspense>
      </LatchkeyUIProvider>,
    )
    expect(screen.getByText('loading')).toBeTruthy()
    expect((await screen.findByTestId('limits')).firstChild?.textContent).toBe('Límites de gasto')
    expect(screen.getByTestId('step').textContent).toBe('Comprobar · Cancelar')
    // Spanish came for the sections shown and no others: the sign-in's is not loaded.
    const loaded = (strings: Strings<string>) => {
      try {
        return typeof readStrings(strings, 'es') === 'object'
      } catch (thrown) {
        if (thrown instanceof Promise) return false
        throw thrown
      }
    }
    expect([limitsStrings, codeStrings, uiStrings].map(loaded)).toEqual([true, true, true])
    expect(loaded(authStrings)).toBe(false)
  })
})
