/** English strings of the marking of hidden characters (`<Marked/>`), shared by the screens that show text a page chose. */
export const enHidden = {
  hiddenCharsWarning:
    'This contains hidden or direction-changing characters, shown as U+ codes: text with one can read as something it is not. Check it before you go on.',
  /** Read before each marked `U+XXXX` code by screen readers. */
  hiddenChar: 'hidden character',
}
