/**
 * The error body of the widely used format (decision 2) and the conversions
 * into it: every failure a handler can produce is an `ApiError`.
 *
 * @internal
 */
import { leafOf } from "@switchboard/core/internal/issue"
import { formatPath } from "@switchboard/core/internal/path"
import * as Data from "effect/Data"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Schema from "effect/Schema"

export class ApiError extends Data.TaggedError("ApiError")<{
  readonly status: number
  readonly message: string
  readonly type: string
  readonly param: string | null
  readonly code: string | null
  readonly headers?: Readonly<Record<string, string>>
}> {}

export const badRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new ApiError({ status: 400, message, type: "invalid_request_error", param, code })

export const invalidJson = () =>
  badRequest("We could not parse the JSON body of your request. Send a valid JSON object.", null, "invalid_json")

export const tooLarge = (limit: number) =>
  new ApiError({
    status: 413,
    message: `The request body is larger than the limit of ${limit} bytes.`,
    type: "invalid_request_error",
    param: null,
    code: "request_too_large"
  })

export const modelNotFound = (model: string) =>
  new ApiError({
    status: 404,
    message: `The model '${model}' does not exist or you do not have access to it.`,
    type: "invalid_request_error",
    param: "model",
    code: "model_not_found"
  })

export const wrongModelKind = (model: string, endpoint: string) =>
  badRequest(`The model '${model}' cannot be used with ${endpoint}.`, "model", "invalid_model")

export const unknownUrl = (method: string, path: string) =>
  new ApiError({ status: 404, message: `Invalid URL (${method} ${path})`, type: "invalid_request_error", param: null, code: "unknown_url" })

export const taskNotFound = (taskId: string) =>
  new ApiError({ status: 404, message: `No task with id '${taskId}'.`, type: "invalid_request_error", param: "task_id", code: "task_not_found" })

export const fileNotFound = (name: string) =>
  new ApiError({ status: 404, message: `No file named '${name}'.`, type: "invalid_request_error", param: null, code: "file_not_found" })

/**
 * A schema failure names its most specific field, as core names the field
 * of an `InvalidRequestError` (`leafOf`): of a union, the member that got
 * furthest; an unknown `role` or part `type`, that field and the value sent.
 */
export const fromSchemaError = (error: Schema.SchemaError): ApiError => {
  const { path, reason } = leafOf(error.issue)
  const param = formatPath(path)
  return badRequest(`Invalid value for '${param}': ${reason}`, param === "" ? null : param, "invalid_value")
}

export const body = (error: ApiError) => ({
  error: { message: error.message, type: error.type, param: error.param, code: error.code }
})

export const toResponse = (error: ApiError): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(body(error), { status: error.status, headers: error.headers ?? {} })
