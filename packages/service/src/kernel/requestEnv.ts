// The variables a request carries through the app: set by the shell's middleware (the request id
// by `observeRequests`, the body limit by `bodyLimits`) and read by the pipeline, the wings' sub-apps
// and plugins' routes. A contract of the kernel, so that no layer imports another's middleware for it.

/** What the activity API notes about the activity a request made, for the request's log line. */
export interface ActivityNote {
  activityId: string
  type: string
  organizationId: string
}

/** The request's own variables, set by `observeRequests` and read by the routes. */
export type ObservedEnv = { Variables: { requestId: string; activity?: ActivityNote } }

/**
 * What the body-limit middleware leaves for the JSON reader, and what the request's log line
 * reads (its id, its activity): the `Env` of every route family's Hono app.
 */
export type PipelineEnv = { Variables: { bodyLimit: number } & ObservedEnv['Variables'] }
