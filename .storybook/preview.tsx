import type { Preview } from '@storybook/react-vite'
import { configure } from 'storybook/test'
import '../src/components/styles.css'
import { LatchkeyUIProvider } from '../src/components/index.ts'
import { installBufferGlobal } from '../stories/support/buffer.ts'

// Stories talk to a real service in the page; on a busy 2-core machine that can take a few seconds.
configure({ asyncUtilTimeout: 10_000 })

// Theme and locale are toolbar globals; a story can pin them with `globals: { theme: 'dark' }`.
const preview: Preview = {
  globalTypes: {
    theme: {
      description: 'Colour scheme',
      toolbar: { icon: 'mirror', items: ['light', 'dark', 'system'], dynamicTitle: true },
    },
    locale: {
      description: 'Language',
      toolbar: {
        icon: 'globe',
        items: [
          { value: 'en', title: 'English' },
          { value: 'es', title: 'Español' },
          { value: 'ar', title: 'العربية' },
        ],
        dynamicTitle: true,
      },
    },
  },
  initialGlobals: { theme: 'light', locale: 'en' },
  parameters: {
    bufferGlobal: installBufferGlobal(),
    layout: 'centered',
    controls: { expanded: true },
  },
  decorators: [
    (Story, context) => {
      const theme = context.globals.theme as 'light' | 'dark' | 'system'
      const dark =
        theme === 'dark' ||
        (theme === 'system' &&
          typeof matchMedia !== 'undefined' &&
          matchMedia('(prefers-color-scheme: dark)').matches)
      document.body.style.background = dark ? '#0c0c0f' : '#f4f4f6'
      document.documentElement.lang = context.globals.locale as string
      return (
        <LatchkeyUIProvider theme={theme} locale={context.globals.locale as string}>
          <Story />
        </LatchkeyUIProvider>
      )
    },
  ],
}

export default preview
