import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { useState } from 'react'
import { describe, expect, it } from 'vitest'
import { CodeField, type CodeFieldKind } from './CodeField.tsx'

function Probe({
  kind,
  error,
  focusOnMount,
}: {
  kind: CodeFieldKind
  error?: unknown
  focusOnMount?: boolean
}) {
  const [value, setValue] = useState('')
  return (
    <>
      <button type="button">before</button>
      <CodeField
        label="Code"
        kind={kind}
        value={value}
        onChange={setValue}
        error={error}
        errorId="the-error"
        {...(focusOnMount !== undefined ? { focusOnMount } : {})}
      />
      <p id="the-error">{error ? 'Wrong code' : ''}</p>
      <output data-testid="value">{value}</output>
    </>
  )
}

describe('<CodeField/>', () => {
  it('is labelled, offers one-time-code autofill and the numeric keypad for digits, and takes focus when it appears', async () => {
    render(<Probe kind="digits" />)
    const field = screen.getByRole('textbox', { name: 'Code' }) as HTMLInputElement
    expect(document.activeElement).toBe(field)
    expect(field.getAttribute('autocomplete')).toBe('one-time-code')
    expect(field.getAttribute('inputmode')).toBe('numeric')
    expect(field.maxLength).toBe(6)
    expect(field.getAttribute('dir')).toBe('ltr')
    expect(field.getAttribute('aria-invalid')).toBeNull()
    expect(field.getAttribute('aria-describedby')).toBeNull()
    await userEvent.setup().type(field, '123456')
    expect(screen.getByTestId('value').textContent).toBe('123456')
  })

  it('a code sent by e-mail or SMS: autofill, letters allowed; a recovery code: no autofill', () => {
    const { unmount } = render(<Probe kind="contact" />)
    const contact = screen.getByRole('textbox', { name: 'Code' })
    expect(contact.getAttribute('autocomplete')).toBe('one-time-code')
    expect(contact.getAttribute('inputmode')).toBeNull()
    expect(contact.getAttribute('maxlength')).toBe('9')
    unmount()
    render(<Probe kind="recovery" />)
    const recovery = screen.getByRole('textbox', { name: 'Code' })
    expect(recovery.getAttribute('autocomplete')).toBe('off')
    expect(recovery.getAttribute('maxlength')).toBe('16')
  })

  it('an error marks it invalid and describes it by the error text', () => {
    render(<Probe kind="digits" error={{ code: 'OTP_INVALID' }} />)
    const field = screen.getByRole('textbox', { name: 'Code' })
    expect(field.getAttribute('aria-invalid')).toBe('true')
    expect(field.getAttribute('aria-describedby')).toBe('the-error')
    expect(screen.getByRole('textbox', { name: 'Code', description: 'Wrong code' })).toBe(field)
  })

  it('leaves focus where it was when told to (a step that focuses its heading first)', () => {
    render(<Probe kind="digits" focusOnMount={false} />)
    expect(document.activeElement).not.toBe(screen.getByRole('textbox', { name: 'Code' }))
  })
})
