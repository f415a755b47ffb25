/** A request stamp: the header to add and its value. */
export interface Stamp {
  header: string
  value: string
}

/** Signs the exact body bytes of a request; every authenticated call goes through one. */
export interface Stamper {
  stamp(body: string): Promise<Stamp>
}
