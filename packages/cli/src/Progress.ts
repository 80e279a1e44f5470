/**
 * The progress of a video task while it is polled. On a terminal: one line
 * redrawn in place (`\r`), a bar when the service reports `progress`, a
 * spinner with the raw state when it does not, and the time elapsed. Not on
 * a terminal (a pipe, a log file, CI): one plain line per change of state or
 * progress, nothing redrawn. The state is the service's text: written
 * through `Output.shown`, like every other output.
 *
 * @since 0.1.0
 */
import type { TaskPoller } from "@switchboard/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Output from "./Output.js"

/**
 * What is drawn: the raw state as the service gave it, and its progress
 * (0–100) when it gave one.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  readonly status: string
  readonly progress?: number | undefined
}

const spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/**
 * A bar of `width` cells, `progress` percent of them filled.
 *
 * @since 0.1.0
 * @category rendering
 */
export const bar = (progress: number, width = 30): string => {
  const filled = Math.round((Math.min(100, Math.max(0, progress)) / 100) * width)
  return "█".repeat(filled) + "░".repeat(width - filled)
}

/**
 * The line drawn on a terminal: `████░░░░ 40% processing · 3.2 s`, or
 * `⠙ queued · 1.0 s` without a progress.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderLine = (state: State, frame: number, elapsedMillis: number): string => {
  const elapsed = Output.seconds(elapsedMillis)
  return state.progress === undefined
    ? `${spinner[frame % spinner.length]} ${state.status} · ${elapsed}`
    : `${bar(state.progress)} ${`${Math.round(state.progress)}%`.padStart(4)} ${state.status} · ${elapsed}`
}

/**
 * The line written off a terminal: `processing 40%`, or `queued`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderPlain = (state: State): string =>
  state.progress === undefined ? state.status : `${state.status} ${Math.round(state.progress)}%`

/**
 * The state an update shows.
 *
 * @since 0.1.0
 * @category rendering
 */
export const stateOf = (update: TaskPoller.TaskUpdate): State => {
  switch (update._tag) {
    case "InProgress":
      return { status: update.status, progress: update.progress }
    case "Succeeded":
      return { status: "succeed", progress: 100 }
    case "Failed":
      return { status: "failed" }
  }
}

/**
 * Draws a video task's progress on a terminal, one update at a time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  /** Shows an update; a terminal update also ends the line. */
  readonly update: (update: TaskPoller.TaskUpdate) => Effect.Effect<void>
}

/**
 * Where progress is drawn, and whether in place.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Default `process.stderr`. */
  readonly target?: Output.Target | undefined
  /** Redraw in place. Default: whether `target` is a terminal. */
  readonly tty?: boolean | undefined
  /** Printed before every line. Default `"  "`. */
  readonly indent?: string | undefined
}

/**
 * A progress display for the life of the scope. On a terminal it redraws
 * ten times a second (so the spinner and the clock move between polls); when
 * the scope closes mid-line (Ctrl-C) it ends the line, so what follows starts
 * on a fresh one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Progress, never, Scope.Scope> =>
  Effect.gen(function*() {
    const target = options.target ?? process.stderr
    const tty = options.tty ?? target.isTTY === true
    const indent = options.indent ?? "  "
    const started = yield* Clock.currentTimeMillis
    let state: State = { status: "waiting for the first status" }
    let frame = 0
    let open = false
    let last: string | undefined

    const fit = (line: string) => {
      const columns = target.columns !== undefined && target.columns > 10 ? target.columns : 80
      return [...line].length < columns ? line : [...line].slice(0, Math.max(1, columns - 2)).join("") + "…"
    }
    const draw = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        target.write(`\r\x1b[2K${fit(Output.shown(Output.oneLine(indent + renderLine(state, frame++, now - started)), target))}`)
        open = true
      }))
    const endLine = Effect.sync(() => {
      if (open) target.write("\n")
      open = false
    })

    if (!tty) {
      return {
        update: (update) =>
          Effect.suspend(() => {
            const line = Output.oneLine(renderPlain(stateOf(update)))
            if (line === last) return Effect.void
            last = line
            return Output.write(`${indent}${line}\n`, target)
          })
      }
    }

    const ticker = yield* Effect.forkScoped(Effect.repeat(draw, Schedule.spaced("100 millis")))
    yield* Effect.addFinalizer(() => Effect.andThen(Fiber.interrupt(ticker), endLine))
    return {
      update: (update) =>
        Effect.suspend(() => {
          state = stateOf(update)
          return update._tag === "InProgress" ? draw : Effect.andThen(Fiber.interrupt(ticker), Effect.andThen(draw, endLine))
        })
    }
  })
