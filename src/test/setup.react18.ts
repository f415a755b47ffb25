import { version } from 'react'
import { version as domVersion } from 'react-dom'

// The dom-react18 project must really run React 18 (a wrong alias would silently test 19 twice).
if (!version.startsWith('18.') || !domVersion.startsWith('18.'))
  throw new Error(`dom-react18 runs React ${version} / react-dom ${domVersion}, expected 18.x`)
