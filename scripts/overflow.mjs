// What sticks out past the right edge of the page: shared by the story test (every story at 320 px)
// and the e2e fixtures (`expectNoHorizontalScroll`). Runs in the page (`page.evaluate(pastRightEdge)`),
// so it uses nothing from this module's scope.

/**
 * The layout viewport's width (`clientWidth`: with mobile emulation `innerWidth` grows to fit
 * content that overflows), the document's `scrollWidth`, and the innermost elements past the right
 * edge, each named by tag, classes and the start of its text (at most 8), so a failure says what to fix.
 */
export function pastRightEdge() {
  const width = document.documentElement.clientWidth
  const offenders = []
  for (const el of document.body.querySelectorAll('*')) {
    const rect = el.getBoundingClientRect()
    if (rect.width === 0 || rect.right <= width + 0.5) continue
    if ([...el.children].some((child) => child.getBoundingClientRect().right > width + 0.5)) continue
    const classes = typeof el.className === 'string' ? el.className.trim().split(/\s+/).join('.') : ''
    const text = (el.textContent ?? '').trim().slice(0, 40)
    offenders.push(
      `${el.tagName.toLowerCase()}${classes ? `.${classes}` : ''}${text ? ` "${text}"` : ''} right=${Math.round(rect.right)}`,
    )
  }
  return { width, scrollWidth: document.documentElement.scrollWidth, offenders: offenders.slice(0, 8) }
}
