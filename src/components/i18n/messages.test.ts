import { describe, expect, it } from 'vitest'
import { ar } from './ar.ts'
import { en } from './en.ts'
import { es } from './es.ts'
import { allStrings, createTranslate, directionOf, preloadMessages } from './messages.ts'

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()

describe('dictionaries', () => {
  it.each([
    ['es', es],
    ['ar', ar],
  ])('%s has every English key, each with the same placeholders', (_, messages) => {
    expect(Object.keys(messages).sort()).toEqual(Object.keys(en).sort())
    for (const key of Object.keys(en) as (keyof typeof en)[])
      expect([key, placeholders(messages[key])]).toEqual([key, placeholders(en[key])])
  })

  it('splits into sections that share no key, each translated whole on its own', async () => {
    const sections = allStrings.parts ?? []
    expect(sections.reduce((sum, section) => sum + Object.keys(section.en).length, 0)).toBe(
      Object.keys(en).length,
    )
    for (const section of sections)
      for (const lang of ['es', 'ar'] as const) {
        await preloadMessages(lang)
        const translated = section.read(lang)
        expect(Object.keys(translated)).toEqual(Object.keys(section.en))
        for (const key of Object.keys(section.en) as (keyof typeof section.en)[])
          expect([key, placeholders(translated[key] ?? '')]).toEqual([
            key,
            placeholders(section.en[key] ?? ''),
          ])
      }
  })

  it('interpolates values, keeps unknown markers, and lets apps override strings', () => {
    const t = createTranslate(en, { signIn: 'Log in' })
    expect(t('signIn')).toBe('Log in')
    expect(t('otpDescription', { length: 6, contact: 'a@b.c' })).toBe('We sent a 6-digit code to a@b.c.')
    expect(t('continueWith')).toBe('Continue with {provider}')
  })

  it('knows the writing direction', () => {
    expect([directionOf('ar'), directionOf('ar-EG'), directionOf('he'), directionOf('es-MX')]).toEqual([
      'rtl',
      'rtl',
      'rtl',
      'ltr',
    ])
  })
})
