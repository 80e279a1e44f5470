/**
 * Every failure of a command as one readable line on stderr (more with
 * `--verbose`), and the exit code it gives:
 *
 * | code | meaning |
 * |---|---|
 * | 0 | done |
 * | 1 | the service, the network or the database failed, a task failed, a file could not be written |
 * | 2 | usage: a bad flag or argument, missing configuration, a request rejected before it was sent, an unusable `--image`/`--from` |
 * | 130 | interrupted (Ctrl-C) |
 *
 * @since 0.1.0
 */
import { SwitchboardError } from "@switchboard/core"
import * as Cause from "effect/Cause"
import * as CliError from "effect/cli/CliError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Help from "./Help.js"
import * as Output from "./Output.js"

/**
 * A command line that parses but makes no sense, e.g. `video forget` of a
 * task the journal does not hold.
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}

/**
 * The base URL or the key is neither given as a flag nor in the environment.
 *
 * @since 0.1.0
 * @category errors
 */
export class MissingConfigurationError extends Schema.TaggedError<MissingConfigurationError>()(
  "MissingConfigurationError",
  { variables: Schema.Array(Schema.String), message: Schema.String }
) {}

/**
 * The failure of a command once it has been reported: only its exit code
 * remains to be used.
 *
 * @since 0.1.0
 * @category errors
 */
export class Reported extends Schema.TaggedError<Reported>()("Reported", { exitCode: Schema.Number }) {}

/**
 * The CLI's exit codes: 0 done, 1 a failure, 2 a usage error, 130
 * interrupted.
 *
 * @since 0.1.0
 * @category exit codes
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const

const field = (error: unknown, name: string): unknown => (Predicate.hasProperty(error, name) ? error[name] : undefined)
const text = (error: unknown, name: string): string | undefined => {
  const value = field(error, name)
  return typeof value === "string" && value !== "" ? value : undefined
}
const tagOf = (error: unknown): string | undefined => text(error, "_tag")
const http = (error: unknown) => {
  const status = field(error, "status")
  return typeof status === "number" ? ` (HTTP ${status})` : ""
}
const messageOf = (error: unknown): string =>
  text(error, "message") ?? (error instanceof Error ? error.message : String(error))

const keyHint = "check --api-key or SWITCHBOARD_API_KEY"
const urlHint = "check --base-url or SWITCHBOARD_BASE_URL"

/** The one line for a typed error of the SDK. */
const describeSdk = (error: SwitchboardError.SwitchboardError): string => {
  const message = error.message
  switch (error._tag) {
    case "ConfigurationError":
      return error.field === "baseUrl"
        ? `The base URL must be an http(s) URL — ${urlHint}`
        : `Invalid configuration, nothing was sent: ${message}`
    case "InvalidRequestError":
      return `Invalid request, nothing was sent: ${message}`
    case "AuthenticationError":
      return `Authentication failed${http(error)}: ${message} — ${keyHint}`
    case "PermissionDeniedError":
      return `Permission denied${http(error)}: ${message}`
    case "NotFoundError":
      return error.param === "model" || error.code === "model_not_found"
        ? `Unknown model${http(error)}: ${message} — \`switchboard models\` lists them`
        : `Not found${http(error)}: ${message}`
    case "BadRequestError":
      return `The service rejected the request${http(error)}: ${message}`
    case "ConflictError":
      return `Conflict${http(error)}: ${message}`
    case "RateLimitError":
      return `Rate limited${http(error)}: ${message}${
        error.retryAfterMillis === undefined ? "" : ` (retry after ${Output.seconds(error.retryAfterMillis)})`
      }`
    case "ClientError":
      return `The service refused the request${http(error)}: ${message}`
    case "ServerError":
      return `The service failed${http(error)}: ${message}`
    case "TransportError":
      return `Cannot reach the service: ${message} — ${urlHint}`
    case "TimeoutError":
      return `Timed out (${error.phase}): ${message}`
    case "ResponseDecodeError":
      return `Unexpected response from the service${http(error)}: ${message}`
    case "StreamError":
      return `The reply stream ${error.reason === "cut" ? "was cut" : "failed"}: ${message}`
    case "ResponseTooLargeError":
      return `The reply was too large: ${message}`
    case "TaskFailedError":
      return `Video task ${error.taskId} failed${error.reason ? `: ${error.reason}` : ""}`
    case "TaskTimeoutError":
      return `Video task ${error.taskId} is not finished yet${
        error.lastStatus ? ` (last status: ${error.lastStatus})` : ""
      }; it stays in the journal — finish it later with: switchboard video resume`
    case "TaskNotFoundError":
      return `The service does not know video task ${error.taskId}${http(error)}: ${
        error.hint ?? "is --model a video model? (or the service has forgotten the task)"
      }. It is no longer in the journal.`
    case "NoImageInResponseError":
      return `The reply holds no image${error.content ? `: "${Output.truncate(error.content, 80)}"` : ""}`
    case "JournalError":
      return `Task journal: ${message}`
  }
}

/**
 * One line for any failure a command can have.
 *
 * @since 0.1.0
 * @category reporting
 */
export const describe = (error: unknown): string => {
  // Whether trying again may help is the error's own answer (as retries and @switchboard/ai read it).
  if (SwitchboardError.isSwitchboardError(error)) return `${describeSdk(error)}${error.isRetryable ? " (temporary: trying again may work)" : ""}`
  if (CliError.isCliError(error)) return Help.usageLine(error)
  switch (tagOf(error)) {
    // The agent's errors (only the demo runs an agent), by tag: importing
    // @switchboard/agent here would load it on every command.
    case "MaxStepsExceeded":
    case "BudgetExceeded":
    case "LoopDetected":
    case "ToolDefect":
    case "DecisionMismatch":
      return `The agent stopped: ${messageOf(error)}`
    case "UsageError":
    case "MissingConfigurationError":
      return messageOf(error)
    case "AttachmentError":
      return text(error, "reason") === "UnknownMediaType" && !/form type\/subtype/.test(messageOf(error))
        ? `Cannot use this image: ${text(error, "source") ?? "it"} is not a PNG, JPEG, GIF or WebP image; if it is an image of another type, name it with --media-type (e.g. --media-type image/heic)`
        : `Cannot use this image: ${messageOf(error)}`
    case "SaveError":
      return `Cannot save ${text(error, "path") ?? "the file"}: ${messageOf(error)}`
    case "ServeError":
      return `Cannot start the emulator: ${messageOf(field(error, "cause") ?? error)}`
    case "ConfigError":
      return `Configuration: ${String(error)}`
    case "DatabaseError":
      return `Cannot use the database ${text(error, "address") ?? ""}: ${messageOf(error)}`
    // A durable video submission whose runner died after sending (VideoWorkflow, at most once).
    case "SubmissionOutcomeUnknownError":
      return `Outcome unknown, not sent again: ${messageOf(error)}`
  }
  return `Unexpected error: ${messageOf(error)}`
}

const detailFields = ["status", "requestId", "type", "code", "param", "field", "reason", "source", "taskId", "model", "hint", "retryAfterMillis", "address"]

/**
 * What `--verbose` adds under the line: the error's tag and fields (never a
 * key: errors carry none), the start of an unexpected body, the stack of a
 * defect.
 *
 * @since 0.1.0
 * @category reporting
 */
export const details = (error: unknown): ReadonlyArray<string> => {
  const lines: Array<string> = []
  const tag = tagOf(error)
  if (tag !== undefined) lines.push(`error: ${tag}`)
  for (const name of detailFields) {
    const value = field(error, name)
    if (value !== undefined && value !== null) lines.push(`${name}: ${String(value)}`)
  }
  const body = text(error, "body") ?? text(error, "content")
  if (body !== undefined) lines.push(`body: ${Output.truncate(body, 500)}`)
  if (tag === undefined && error instanceof Error && error.stack) lines.push(...error.stack.split("\n"))
  return lines
}

/**
 * The exit code of a failure (see the table above).
 *
 * @since 0.1.0
 * @category exit codes
 */
export const exitCodeOf = (error: unknown): number => {
  if (CliError.isCliError(error)) return error._tag === "ShowHelp" && error.errors.length === 0 ? ExitCode.ok : ExitCode.usage
  switch (tagOf(error)) {
    case "Reported":
      return Number(field(error, "exitCode"))
    case "UsageError":
    case "MissingConfigurationError":
    case "ConfigurationError":
    case "InvalidRequestError":
    case "AttachmentError":
      return ExitCode.usage
  }
  return ExitCode.failure
}

/**
 * The failure of a cause, or its first defect.
 *
 * @since 0.1.0
 * @category reporting
 */
export const errorOf = <E>(cause: Cause.Cause<E>): unknown =>
  Option.getOrElse(Cause.findErrorOption(cause) as Option.Option<unknown>, () => Cause.squash(cause))

/**
 * The lines to print for a failure: the line (prefixed with ✖), then the
 * details when `verbose`.
 *
 * @since 0.1.0
 * @category reporting
 */
export const render = (error: unknown, verbose: boolean): string => {
  // The parser's errors, one line each.
  if (CliError.isCliError(error) && error._tag === "ShowHelp" && error.errors.length > 0) {
    return error.errors.map((e) => render(e, verbose)).join("\n")
  }
  // One line each, whatever the service's message holds.
  const head = `${Output.red("✖", process.stderr)} ${Output.oneLine(describe(error))}`
  return verbose ? [head, ...details(error).map((l) => Output.dim(`  ${Output.oneLine(l)}`, process.stderr))].join("\n") : head
}

/**
 * Prints a command's failure and turns it into `Reported` with its exit
 * code; interruption and failures already `Reported` pass through untouched.
 *
 * @since 0.1.0
 * @category reporting
 */
export const reported = (verbose: boolean) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Reported, R> =>
  Effect.catchCause(self, (cause) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
    const error = errorOf(cause)
    if (error instanceof Reported) return Effect.fail(error)
    return Effect.andThen(
      Output.errorLine(render(error, verbose)),
      Effect.fail(new Reported({ exitCode: exitCodeOf(error) }))
    )
  })

/**
 * The exit code of the whole program.
 *
 * @since 0.1.0
 * @category exit codes
 */
export const exitCode = <A, E>(exit: Exit.Exit<A, E>): number =>
  Exit.isSuccess(exit)
    ? ExitCode.ok
    : Cause.hasInterruptsOnly(exit.cause)
    ? ExitCode.interrupted
    : exitCodeOf(errorOf(exit.cause))

/**
 * Prints a failure nobody has reported yet: a usage error of the parser,
 * or a defect (commands print theirs through `reported`).
 *
 * @since 0.1.0
 * @category reporting
 */
export const reportUnexpected = <E>(cause: Cause.Cause<E>): Effect.Effect<void> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.void
  const error = errorOf(cause)
  // Reported, or help that was asked for (printed already).
  if (tagOf(error) === "Reported" || exitCodeOf(error) === ExitCode.ok) return Effect.void
  return Output.errorLine(render(error, process.argv.includes("--verbose")))
}
