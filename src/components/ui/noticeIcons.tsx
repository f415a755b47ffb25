import { type IconProps, Stroke } from './baseIcons.tsx'

// The icons of alerts and the footer, which only steps and screens draw (not start-up code).

export const AlertIcon = (p: IconProps) => (
  <Stroke size={18} {...p}>
    <circle cx="12" cy="12" r="9.5" />
    <path d="M12 7.5v5M12 16.3v.2" />
  </Stroke>
)
export const WarningIcon = (p: IconProps) => (
  <Stroke size={18} {...p}>
    <path d="M10.3 3.9 2.4 17.6A2 2 0 0 0 4.1 20.6h15.8a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0Z" />
    <path d="M12 9v4M12 17v.2" />
  </Stroke>
)
export const ShieldIcon = (p: IconProps) => (
  <Stroke size={14} {...p}>
    <path d="M12 21.5s7.5-3.2 7.5-9.5V5.6L12 2.5 4.5 5.6V12c0 6.3 7.5 9.5 7.5 9.5Z" />
  </Stroke>
)
