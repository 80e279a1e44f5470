/**
 * Bearer-key check. The key is only ever compared, never copied into a
 * response, header or log line.
 *
 * @internal
 */
import { ApiError } from "./errors.js"

export const isAuthorized = (authorization: string | undefined, apiKey: string): boolean => {
  const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? "")
  return match !== null && match[1] === apiKey
}

export const unauthorized = () =>
  new ApiError({
    status: 401,
    message: "Invalid or missing API key",
    type: "authentication_error",
    param: null,
    code: "invalid_api_key"
  })
