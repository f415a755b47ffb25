import type { enHidden } from '../en/hidden.ts'
import type { Translation } from '../strings.ts'

/** Spanish: hidden characters, marked. */
export const hidden: Translation<typeof enHidden> = {
  hiddenCharsWarning:
    'Contiene caracteres ocultos o que cambian la dirección del texto, mostrados como códigos U+: un texto con uno puede leerse como lo que no es. Revísalo antes de continuar.',
  hiddenChar: 'carácter oculto',
}
