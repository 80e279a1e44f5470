/**
 * The contract's status → error table, the oracle of the tests that walk
 * statuses (core's property tests, node's statuses test): one copy, so the
 * two cannot drift apart.
 */
export const errorTagByStatus: Readonly<Record<number, string>> = {
  400: "BadRequestError",
  401: "AuthenticationError",
  403: "PermissionDeniedError",
  404: "NotFoundError",
  408: "TimeoutError",
  409: "ConflictError",
  422: "BadRequestError",
  429: "RateLimitError"
}

/** The error tag a status outside 2xx maps to; `table` for a capability with its own (e.g. a task's 404). */
export const expectedErrorTag = (status: number, table: Readonly<Record<number, string>> = errorTagByStatus): string =>
  table[status] ?? (status >= 500 ? "ServerError" : "ClientError")
