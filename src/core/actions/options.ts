/** Options every activity action accepts beside its parameters. */
export interface ActionOptions {
  /** Organization to act in. @default the session's organization */
  organizationId?: string | undefined
  /** Act as this session instead of the active one. */
  sessionId?: string | undefined
  signal?: AbortSignal | undefined
}

/** Splits an action's parameters from its options. */
export function splitOptions<T extends ActionOptions>(
  parameters: T,
): [Omit<T, keyof ActionOptions>, ActionOptions] {
  const { organizationId, sessionId, signal, ...rest } = parameters
  return [rest, { organizationId, sessionId, signal }]
}
