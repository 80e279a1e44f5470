/**
 * A scripted model service, served at the wire: `layer(steps)` provides the
 * whole SDK (`Chat`, `Embeddings`, `Images`, `Videos`, `Moderations`,
 * `Models`) over an `HttpWire` that answers each call with the next step of
 * the script. Everything above the wire is the real SDK: request
 * validation, retries, server-sent event decoding, `ChatFold`, spans, error
 * mapping. Nothing here is Node's: it runs in a browser's tests too.
 *
 * A script that disagrees with the program fails the call: past the end of
 * the script (`UnexpectedCallError`), or a step that cannot answer it
 * (`StepMismatchError`). The call fails with the SDK's
 * `ResponseDecodeError`, whose message is the kit's, never retried; the
 * kit's own typed error is what `assertComplete` (and `check`) fail with.
 *
 * @example
 * ```ts
 * import * as Chat from "@switchboard/core/Chat"
 * import * as Reply from "@switchboard/testing/Reply"
 * import * as ScriptedModel from "@switchboard/testing/ScriptedModel"
 * import * as Effect from "effect/Effect"
 *
 * const test = Effect.gen(function*() {
 *   const reply = yield* Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] })
 *   yield* ScriptedModel.assertComplete
 *   return reply.choices[0]?.message.content // "Hello!"
 * }).pipe(Effect.provide(ScriptedModel.layer([Reply.text("Hello!")])))
 * ```
 *
 * @since 1.0.0
 */
import * as HttpWire from "@switchboard/core/HttpWire"
import type * as Protocol from "@switchboard/core/Protocol"
import * as Switchboard from "@switchboard/core/Switchboard"
import * as SwitchboardConfig from "@switchboard/core/SwitchboardConfig"
import type { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as TaskJournal from "@switchboard/core/TaskJournal"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Serve from "./internal/serve.js"
import type * as Reply from "./Reply.js"

/**
 * A call past the end of the script: `index` is the call's (0 for the
 * first), `request` its decoded body.
 *
 * @since 1.0.0
 * @category errors
 */
export class UnexpectedCallError extends Data.TaggedError("UnexpectedCallError")<{
  readonly index: number
  readonly method: string
  readonly path: string
  readonly request: unknown
  readonly steps: number
  readonly message: string
}> {}

/**
 * A step that cannot answer the call it was given: a tool call to a tool
 * the request does not offer, an image step answering embeddings, …
 *
 * @since 1.0.0
 * @category errors
 */
export class StepMismatchError extends Data.TaggedError("StepMismatchError")<{
  readonly step: number
  readonly index: number
  readonly path: string
  readonly request: unknown
  readonly reason: string
  readonly message: string
}> {}

/**
 * `assertComplete` found steps no call took.
 *
 * @since 1.0.0
 * @category errors
 */
export class UnconsumedStepsError extends Data.TaggedError("UnconsumedStepsError")<{
  readonly remaining: number
  readonly steps: number
  readonly message: string
}> {}

/**
 * How a script and a program disagreed during a call.
 *
 * @since 1.0.0
 * @category errors
 */
export type ScriptError = UnexpectedCallError | StepMismatchError

/**
 * The scripted model's state: the calls made so far, the steps left, and a
 * way to add more.
 *
 * @since 1.0.0
 * @category models
 */
export interface Service {
  /** Every call made so far, in order, with its decoded request and whether it streamed. */
  readonly calls: Effect.Effect<ReadonlyArray<Reply.Call>>
  /** Steps not yet taken. */
  readonly remaining: Effect.Effect<number>
  /** Adds steps at the end of the script. */
  readonly append: (steps: ReadonlyArray<Reply.Step>) => Effect.Effect<void>
  /**
   * Fails with the first disagreement a call met, else with
   * `UnconsumedStepsError` when steps are left.
   */
  readonly assertComplete: Effect.Effect<void, ScriptError | UnconsumedStepsError>
}

/**
 * The service that holds a scripted model's state (see `Service`).
 *
 * @since 1.0.0
 * @category tags
 */
export class ScriptedModel extends Context.Service<ScriptedModel, Service>()("@switchboard/testing/ScriptedModel") {}

interface Answered {
  readonly served: Serve.Served
  readonly timing: Reply.Timing
}

interface Task {
  readonly step: number
  readonly statuses: ReadonlyArray<Reply.TaskStatus>
  polls: number
}

const summary = (method: string, path: string, request: unknown): string => {
  const text = request === undefined ? "" : ` ${JSON.stringify(request)}`
  return `${method} ${path}${text.length > 240 ? `${text.slice(0, 240)}…` : text}`
}

const taskIdOf = (request: unknown): string | undefined => {
  if (typeof request !== "object" || request === null) return undefined
  const value = Object.values(request).find((v) => typeof v === "string")
  return typeof value === "string" ? value : undefined
}

const encoder = new TextEncoder()

/**
 * The service and the wire over one script.
 *
 * @since 1.0.0
 * @category constructors
 */
export const make = (
  initial: ReadonlyArray<Reply.Step>
): Effect.Effect<{ readonly service: Service; readonly wire: HttpWire.Service }> =>
  Effect.sync(() => {
    const steps = [...initial]
    const calls: Array<Reply.Call> = []
    const failures: Array<ScriptError> = []
    const tasks = new Map<string, Task>()
    let next = 0

    /** The call, answered: what goes back, or the kit's error. */
    const answer = (request: HttpWire.Request, streamed: boolean, created: number): Answered | ScriptError => {
      const path = Serve.pathOf(request.url)
      const kind = Serve.kindOf(path)
      const body = Serve.requestBody(request.body?.text)
      const chat = kind === "chat" ? body as Protocol.ChatRequest : undefined
      const index = calls.length
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== "authorization"))
      const record = (step: number | undefined) =>
        calls.push({ index, method: request.method, path, headers, request: body, chat, streamed, step })
      const fail = (error: ScriptError) => {
        failures.push(error)
        return error
      }
      const polled = kind === "status" ? taskIdOf(body) : undefined
      const task = polled === undefined ? undefined : tasks.get(polled)
      if (task !== undefined && polled !== undefined) {
        record(task.step)
        const status = task.statuses[Math.min(task.polls++, task.statuses.length - 1)] ?? "succeed"
        return { served: Serve.taskStatus(polled, status), timing: {} }
      }
      if (next >= steps.length) {
        record(undefined)
        return fail(
          new UnexpectedCallError({
            index,
            method: request.method,
            path,
            request: body,
            steps: steps.length,
            message: `call ${index} is past the end of the script (${steps.length} ${steps.length === 1 ? "step" : "steps"}): ${
              summary(request.method, path, body)
            }`
          })
        )
      }
      const stepIndex = next++
      record(stepIndex)
      let step = steps[stepIndex]!
      const call = calls[index]!
      while (step._tag === "Respond") step = step.respond(call)
      const served = Serve.serve(step, { index, kind, request: body, chat, streamed, created })
      if ("_tag" in served) {
        return fail(
          new StepMismatchError({
            step: stepIndex,
            index,
            path,
            request: body,
            reason: served.reason,
            message: `step ${stepIndex} cannot answer call ${index}: ${served.reason}: ${summary(request.method, path, body)}`
          })
        )
      }
      if (step._tag === "Video") {
        const taskId = step.taskId ?? `task_${index}`
        tasks.set(taskId, { step: stepIndex, statuses: step.statuses, polls: 0 })
      }
      return { served, timing: step.options }
    }

    // As every wire does: the current span's `traceparent` goes on the request.
    const exchange = (sent: HttpWire.Request, streamed: boolean) =>
      Effect.flatMap(Effect.zip(HttpWire.traced(sent), Clock.currentTimeMillis), ([request, now]) => {
        const answered = answer(request, streamed, Math.floor(now / 1000))
        if (answered instanceof UnexpectedCallError || answered instanceof StepMismatchError) {
          // A decode failure: never retried, and its message (the kit's) reaches the caller.
          return Effect.fail(new HttpWire.WireError({ reason: "decode", cause: answered }))
        }
        const delay = answered.timing.delay
        return delay === undefined ? Effect.succeed(answered) : Effect.as(Effect.sleep(delay), answered)
      })

    const wire: HttpWire.Service = {
      text: (request, _limits, onHead) =>
        Effect.flatMap(exchange(request, false), ({ served, timing }) => {
          // The scripted head comes after its delay, with its body at once.
          onHead?.()
          return timing.cutAfter !== undefined && served.status < 300 ?
            Effect.fail(new HttpWire.WireError({ reason: "response" })) :
            Effect.succeed({ status: served.status, headers: served.headers, text: served.body })
        }),
      open: (request) =>
        Effect.map(exchange(request, true), ({ served, timing }) => ({
          status: served.status,
          headers: served.headers,
          body: bodyOf(served, timing),
          commit: () => {}
        }))
    }

    const service: Service = {
      calls: Effect.sync(() => [...calls]),
      remaining: Effect.sync(() => steps.length - next),
      append: (more) => Effect.sync(() => void steps.push(...more)),
      assertComplete: Effect.suspend((): Effect.Effect<void, ScriptError | UnconsumedStepsError> => {
        const first = failures[0]
        if (first !== undefined) return Effect.fail(first)
        const left = steps.length - next
        return left === 0 ? Effect.void : Effect.fail(
          new UnconsumedStepsError({
            remaining: left,
            steps: steps.length,
            message: `${left} of ${steps.length} scripted steps ${left === 1 ? "was" : "were"} never used (the first unused is step ${next})`
          })
        )
      })
    }
    return { service, wire }
  })

/** The reply's bytes as they arrive: one event at a time, paced and cut as the step says. */
const bodyOf = (served: Serve.Served, timing: Reply.Timing): Stream.Stream<Uint8Array, HttpWire.WireError> => {
  if (served.events === undefined || served.status >= 300) return Stream.make(encoder.encode(served.body))
  const events = timing.cutAfter === undefined ? served.events : served.events.slice(0, timing.cutAfter)
  const bytes = events.map((data) => encoder.encode(`data: ${data}\n\n`))
  const gap = timing.chunkDelay === undefined ? 0 : Duration.toMillis(Duration.fromInputUnsafe(timing.chunkDelay))
  const paced = gap > 0 ?
    Stream.mapEffect(Stream.fromIterable(bytes), (chunk, i) => i === 0 ? Effect.succeed(chunk) : Effect.as(Effect.sleep(gap), chunk)) :
    Stream.fromArray(bytes)
  return timing.cutAfter === undefined ? paced : Stream.concat(paced, Stream.fail(new HttpWire.WireError({ reason: "response" })))
}

/**
 * The scripted `HttpWire` and the `ScriptedModel` service alone, for a
 * program that builds the SDK's layers itself (`Switchboard.layer` with its
 * own configuration and task journal).
 *
 * @since 1.0.0
 * @category layers
 */
export const layerWire = (steps: ReadonlyArray<Reply.Step>): Layer.Layer<ScriptedModel | HttpWire.HttpWire> =>
  Layer.fresh(Layer.effectContext(Effect.map(make(steps), ({ service, wire }) =>
    Context.make(ScriptedModel, service).pipe(Context.add(HttpWire.HttpWire, wire))
  )))

/**
 * Options of `layer`: the SDK's configuration. `baseUrl` defaults to an
 * address nothing listens on (nothing is ever sent), `apiKey` to
 * `sk-scripted`.
 *
 * @since 1.0.0
 * @category models
 */
export type Options = Partial<SwitchboardConfig.Options>

/**
 * What `layer` provides: every SDK service, its configuration, an in-memory
 * task journal, the scripted wire and `ScriptedModel`.
 *
 * @since 1.0.0
 * @category models
 */
export type Services =
  | Switchboard.Services
  | SwitchboardConfig.SwitchboardConfig
  | TaskJournal.TaskJournal
  | HttpWire.HttpWire
  | ScriptedModel

/**
 * The whole SDK over the script.
 *
 * @since 1.0.0
 * @category layers
 */
export const layer = (steps: ReadonlyArray<Reply.Step>, options: Options = {}): Layer.Layer<Services, ConfigurationError> =>
  Switchboard.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      SwitchboardConfig.layer({ baseUrl: "http://scripted.invalid", apiKey: "sk-scripted", ...options }),
      TaskJournal.layerMemory,
      layerWire(steps)
    ))
  )

/**
 * Every call the `ScriptedModel` in context answered so far, in order.
 *
 * @since 1.0.0
 * @category accessors
 */
export const calls: Effect.Effect<ReadonlyArray<Reply.Call>, never, ScriptedModel> = ScriptedModel.use((s) => s.calls)

/**
 * How many steps the `ScriptedModel` in context has left.
 *
 * @since 1.0.0
 * @category accessors
 */
export const remaining: Effect.Effect<number, never, ScriptedModel> = ScriptedModel.use((s) => s.remaining)

/**
 * Adds steps at the end of the script of the `ScriptedModel` in context.
 *
 * @since 1.0.0
 * @category accessors
 */
export const append = (steps: ReadonlyArray<Reply.Step>): Effect.Effect<void, never, ScriptedModel> =>
  ScriptedModel.use((s) => s.append(steps))

/**
 * Fails with the first disagreement a call met (`UnexpectedCallError`,
 * `StepMismatchError`), else with `UnconsumedStepsError` when steps are left.
 *
 * @since 1.0.0
 * @category accessors
 */
export const assertComplete: Effect.Effect<void, ScriptError | UnconsumedStepsError, ScriptedModel> = ScriptedModel.use((
  s
) => s.assertComplete)

/**
 * Runs `effect`, then `assertComplete`. When `effect` fails after the script
 * disagreed with it, the failure is the kit's typed error (which says what
 * disagreed), not the SDK error the call surfaced as.
 *
 * @since 1.0.0
 * @category combinators
 */
export const check = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | ScriptError | UnconsumedStepsError, R | ScriptedModel> =>
  Effect.flatMap(Effect.service(ScriptedModel), (scripted) =>
    Effect.matchEffect(effect, {
      // A disagreement explains the failure better than the SDK error it caused; steps left do not.
      onFailure: (error) =>
        Effect.andThen(
          Effect.catchTag(scripted.assertComplete, "UnconsumedStepsError", () => Effect.void),
          Effect.fail(error)
        ),
      onSuccess: (a) => Effect.as(scripted.assertComplete, a)
    }))
