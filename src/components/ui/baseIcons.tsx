import type { SVGProps } from 'react'

// The icons the dialog header draws: imported by start-up code, so kept apart from the rest of the
// set (noticeIcons.tsx for alerts and the footer, icons.tsx), which only steps and screens use.

export type IconProps = SVGProps<SVGSVGElement> & { size?: number }

export function Stroke({ size = 20, children, ...rest }: IconProps) {
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      focusable="false"
      {...rest}
    >
      {children}
    </svg>
  )
}

export const CloseIcon = (p: IconProps) => (
  <Stroke {...p}>
    <path d="M18 6 6 18M6 6l12 12" />
  </Stroke>
)
export const BackIcon = (p: IconProps) => (
  <Stroke className="lk-flip" {...p}>
    <path d="M19 12H5M12 19l-7-7 7-7" />
  </Stroke>
)
