import { render } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { NetworkError, ServiceError } from '../../core/errors.ts'
import { en } from '../i18n/en.ts'
import { ErrorText, MessageText } from './ErrorText.tsx'
import { uiStrings } from './uiStrings.ts'
import { useUi } from './useUi.ts'

/** The rendered message as [tag, text, href?] per node, so a test sees the whole structure. */
const structure = (element: Element) =>
  [...element.childNodes].map((node) =>
    node.nodeType === node.TEXT_NODE
      ? ['#text', node.textContent]
      : node.nodeName === 'A'
        ? ['a', node.textContent, (node as HTMLAnchorElement).getAttribute('href')]
        : [node.nodeName.toLowerCase(), node.textContent],
  )

const renderText = (text: string) => {
  const { container } = render(<MessageText text={text} />)
  return container.querySelector('.lk-message') as HTMLElement
}

function ErrorProbe({ error }: { error: unknown }) {
  const ui = useUi({}, uiStrings)
  return (
    <p data-testid="probe">
      <ErrorText ui={ui} error={error} />
    </p>
  )
}

describe('<MessageText/>', () => {
  it('renders backticked spans as <code>, with no backtick left in the text', () => {
    const message = renderText('Fix the `organizationId` option passed to `createLatchkey`.')
    expect(structure(message)).toEqual([
      ['#text', 'Fix the '],
      ['code', 'organizationId'],
      ['#text', ' option passed to '],
      ['code', 'createLatchkey'],
      ['#text', '.'],
    ])
    expect(message.textContent).not.toContain('`')
  })

  it('links http(s) URLs, leaving the sentence’s punctuation out of them', () => {
    const message = renderText('Is it running at http://127.0.0.1:8787? Or open https://localhost:5173/app.')
    expect(structure(message)).toEqual([
      ['#text', 'Is it running at '],
      ['a', 'http://127.0.0.1:8787', 'http://127.0.0.1:8787'],
      ['#text', '? Or open '],
      ['a', 'https://localhost:5173/app', 'https://localhost:5173/app'],
      ['#text', '.'],
    ])
    expect(message.querySelector('a')?.getAttribute('rel')).toBe('noreferrer')
  })

  it('links nothing but http(s), never links inside code, and keeps markup as text', () => {
    const message = renderText(
      'javascript:alert(1) <b>bold</b> `http://inside.example` ftp://files.example `unclosed',
    )
    expect(message.querySelectorAll('a')).toHaveLength(0)
    expect(message.querySelectorAll('b')).toHaveLength(0)
    expect(structure(message)).toEqual([
      ['#text', 'javascript:alert(1) <b>bold</b> '],
      ['code', 'http://inside.example'],
      ['#text', ' ftp://files.example `unclosed'],
    ])
  })

  it('ends an Arabic sentence’s URL before its question mark', () => {
    const message = renderText('هل الخدمة تعمل على http://127.0.0.1:8787؟ شغّلها')
    expect(message.querySelector('a')?.getAttribute('href')).toBe('http://127.0.0.1:8787')
  })
})

describe('<ErrorText/>', () => {
  afterEach(() => {
    vi.restoreAllMocks()
    vi.unstubAllGlobals()
  })

  it('shows a stopped service’s hint with the command an installed app runs, as code, and its URL as a link', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const { getByTestId } = render(
      <ErrorProbe error={new NetworkError('http://127.0.0.1:8787/v1/wallet_kit_config')} />,
    )
    const probe = getByTestId('probe')
    expect(probe.textContent).toBe(
      `${en.errorNetwork} (NETWORK_ERROR) ` +
        'Is the service running at http://127.0.0.1:8787? ' +
        'Start it with npx latchkey-service dev --env .env.local.',
    )
    expect(probe.querySelector('code')?.textContent).toBe('npx latchkey-service dev --env .env.local')
    expect(probe.querySelector('a')?.getAttribute('href')).toBe('http://127.0.0.1:8787')
  })

  it("shows what an error carries as text: another party's code, field and URL are never links or code of theirs", () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    // Development builds add the error's code and a hint. A code the kit does not know is another
    // party's (here a browser wallet's error), and the service chose its own error's details.
    const code = 'LOCKED. Unlock at https://latchkey-support.example/verify `now`'
    const wallet = Object.assign(new Error('rejected'), { code })
    const { getByTestId, unmount } = render(<ErrorProbe error={wallet} />)
    expect(getByTestId('probe').textContent).toBe(`${en.errorGeneric} (${code}) ${en.devHintConsole}`)
    expect(getByTestId('probe').querySelectorAll('a, code')).toHaveLength(0)
    unmount()
    // A hint's field stays the kit's code span, with the service's text inside it and nothing else.
    const field = 'x` https://latchkey-support.example/verify `y'
    const config = new ServiceError('x', { code: 'CONFIG_INVALID', details: { field } })
    const second = render(<ErrorProbe error={config} />)
    const probe = second.getByTestId('probe')
    expect([...probe.querySelectorAll('code')].map((c) => c.textContent)).toEqual([field, 'createLatchkey'])
    expect(probe.querySelectorAll('a')).toHaveLength(0)
    second.unmount()
    // A URL in a service's details is text too (the kit links only the requests it made itself).
    const network = new ServiceError('x', {
      code: 'NETWORK_ERROR',
      details: { url: 'https://latchkey-support.example/verify' },
    })
    const third = render(<ErrorProbe error={network} />)
    expect(third.getByTestId('probe').textContent).toContain(
      'Is the service running at https://latchkey-support.example/verify?',
    )
    expect(third.getByTestId('probe').querySelectorAll('a')).toHaveLength(0)
  })

  it('links the passkey fix for a page on an IP address', () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    vi.stubGlobal('location', new URL('http://127.0.0.1:5173/app'))
    const error = Object.assign(new Error('invalid domain'), { code: 'ERROR_INVALID_DOMAIN' })
    const { getByTestId } = render(<ErrorProbe error={error} />)
    const link = getByTestId('probe').querySelector('a')
    expect([link?.textContent, link?.getAttribute('href')]).toEqual([
      'http://localhost:5173',
      'http://localhost:5173',
    ])
  })
})
