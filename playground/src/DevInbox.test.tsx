import { act, screen, waitFor } from '@testing-library/react'
import { LatchkeyProvider } from 'latchkey'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { signedInClient } from '../../src/components/test/renderWithService.tsx'
import { NewCodeToast, type OutboxMessage } from './DevInbox.tsx'

const message = (otpId: string, contact: string, code: string): OutboxMessage => ({
  otpId,
  otpType: 'OTP_TYPE_EMAIL',
  contact,
  code,
  subject: 'Your code',
  body: `Your code is ${code}`,
  sentAt: new Date().toISOString(),
})

describe('the dev inbox toast', () => {
  beforeEach(() => {
    // happy-dom has no popover API: a set stands in for the top layer.
    const open = new WeakSet<Element>()
    Object.assign(HTMLElement.prototype, {
      showPopover(this: HTMLElement) {
        open.add(this)
      },
      hidePopover(this: HTMLElement) {
        open.delete(this)
      },
    })
    const matches = HTMLElement.prototype.matches
    vi.spyOn(HTMLElement.prototype, 'matches').mockImplementation(function (this: HTMLElement, selector) {
      return selector === ':popover-open' ? open.has(this) : matches.call(this, selector)
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
    const prototype = HTMLElement.prototype as Partial<HTMLElement>
    delete prototype.showPopover
    delete prototype.hidePopover
  })

  it('shows a new code, and goes away once that sign-in made a session', async () => {
    const { client, render, signIn } = await signedInClient({}, 'first@example.com')
    const old = [message('1', 'first@example.com', '111111')]
    const view = render(<NewCodeToast messages={old} />)
    const toast = screen.getByRole('status')
    // Codes already in the outbox are not news.
    expect(toast.textContent).toBe('')
    const fresh = [message('2', 'second@example.com', '222222'), ...old]
    view.rerender(
      <LatchkeyProvider client={client}>
        <NewCodeToast messages={fresh} />
      </LatchkeyProvider>,
    )
    await waitFor(() => expect(toast.textContent).toBe('Dev inbox · e-mail to second@example.com222222'))
    expect(toast.matches(':popover-open')).toBe(true)
    await act(() => signIn('second@example.com'))
    await waitFor(() => expect(toast.textContent).toBe(''))
    expect(toast.matches(':popover-open')).toBe(false)
  })

  it('does not show a code that the sign-in used before the inbox polled it', async () => {
    const { client, render, signIn } = await signedInClient({}, 'first@example.com')
    const view = render(<NewCodeToast messages={[]} />)
    const toast = screen.getByRole('status')
    // The code is sent, the sign-in uses it, and only then does the two-second poll bring it in.
    const sent = message('3', 'third@example.com', '333333')
    await act(() => signIn('third@example.com'))
    view.rerender(
      <LatchkeyProvider client={client}>
        <NewCodeToast messages={[sent]} />
      </LatchkeyProvider>,
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(toast.textContent).toBe('')
    expect(toast.matches(':popover-open')).toBe(false)
    // A code sent after that sign-in (another account being added) is news again.
    const later = {
      ...message('4', 'fourth@example.com', '444444'),
      sentAt: new Date(Date.now() + 1000).toISOString(),
    }
    view.rerender(
      <LatchkeyProvider client={client}>
        <NewCodeToast messages={[later, sent]} />
      </LatchkeyProvider>,
    )
    await waitFor(() => expect(toast.textContent).toBe('Dev inbox · e-mail to fourth@example.com444444'))
  })
})
