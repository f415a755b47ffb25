import { render, screen } from '@testing-library/react'
import { Suspense, version } from 'react'
import { describe, expect, it } from 'vitest'
import { useUi } from './useUi.ts'

function Probe({ locale }: { locale: string }) {
  const ui = useUi({ locale })
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
})
