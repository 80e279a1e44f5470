/**
 * Soak: thousands of mixed calls at concurrency 32 against the emulator with
 * a seeded 20 % of responses faulted. Every call must end, within its
 * deadline, in the right result or in the typed error that the faults its
 * attempts met call for (decision 6): no hang, no defect, no short stream.
 *
 * It runs on the live clock (`it.live`): retry waits are zero
 * (`retryBaseDelay: 0`, `Retry-After: 0`), so the only real waiting is the
 * SDK's own timeouts firing on `Delay` and `StallStream` faults. The test
 * never sleeps. The figures it prints are recorded in `docs/reliability.md`.
 *
 * Its verdict does not depend on the machine's speed. The time limits are
 * real (the wire's timers), and on a starved machine one can overtake an
 * attempt the emulator answered at once: the emulator, in this process,
 * waits for the CPU as the client does. So the oracle reads each attempt as
 * the client saw it too (a retry rule that notes every error it is asked
 * about): an attempt that timed out met a timeout, whatever its fault, and
 * the call must then have lasted at least that many time limits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, Embeddings, Moderations, type Protocol, Retry, Switchboard, type SwitchboardError, Videos } from "@switchboard/core"
import { isSwitchboardError } from "@switchboard/core/SwitchboardError"
import { Emulator } from "@switchboard/emulator"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { NodeSwitchboard } from "../src/index.js"
import { emulated, waitUntil } from "./fixtures.js"

const CALLS = 5_000
const CONCURRENCY = 32
const RATE = 0.2
const SEED = 20_240_601
const MAX_RETRIES = 2
/** Every time limit of the soak's SDK, in ms. */
const LIMIT_MILLIS = 2_000
/**
 * Per-call guard against hangs: far above the worst legitimate path (3
 * attempts × 2 s), with room for a starved machine.
 */
const DEADLINE = "2 minutes"

const randomFaults: ReadonlyArray<Emulator.Fault> = [
  { _tag: "Status", status: 429, retryAfter: 0 },
  { _tag: "Status", status: 500 },
  { _tag: "Status", status: 502 },
  { _tag: "Status", status: 503, retryAfterMs: 0 },
  { _tag: "Reset" },
  { _tag: "ResetAfterHeaders" },
  { _tag: "TruncateBody", keep: 0.5 },
  { _tag: "TruncateBody", keep: 0.3, closeConnection: true },
  { _tag: "Delay", delay: "1 hour" },
  { _tag: "Delay", delay: "1 hour", afterHeaders: true },
  { _tag: "CutStream", afterChunks: 3 },
  { _tag: "StallStream", afterChunks: 2 },
  { _tag: "ErrorEvent", afterChunks: 4, message: "The model is overloaded" }
]

type Kind = "chat" | "stream" | "embed" | "moderate" | "status"
/** 30 % chat, 20 % streams, 20 % embeddings, 15 % moderation, 15 % video status. */
const kindOf = (i: number): Kind => {
  const slot = i % 20
  return slot < 6 ? "chat" : slot < 10 ? "stream" : slot < 14 ? "embed" : slot < 17 ? "moderate" : "status"
}

// ---------------------------------------------------------------------------
// The oracle: what a call must end in, from the faults its attempts met
// ---------------------------------------------------------------------------

type Met =
  | { readonly _tag: "ok" }
  | { readonly _tag: "error"; readonly error: string; readonly retried: boolean }

const label = (fault: Emulator.Fault | undefined): string => {
  if (fault === undefined) return "none"
  switch (fault._tag) {
    case "Status":
      return `Status ${fault.status}`
    case "Delay":
      return fault.afterHeaders ? "Delay (after headers)" : "Delay"
    case "TruncateBody":
      return fault.closeConnection ? "TruncateBody (connection closed)" : "TruncateBody (short Content-Length)"
    default:
      return fault._tag
  }
}

/** What one attempt that met `fault` ends in, for a JSON call or a stream (decision 6). */
const meet = (fault: Emulator.Fault | undefined, streamed: boolean): Met => {
  const retried = (error: string): Met => ({ _tag: "error", error, retried: true })
  const final = (error: string): Met => ({ _tag: "error", error, retried: false })
  switch (fault?._tag) {
    case undefined:
      return { _tag: "ok" }
    case "Status":
      return retried(fault.status === 429 ? "RateLimitError" : "ServerError")
    case "Reset":
    case "ResetAfterHeaders":
      return retried("TransportError")
    case "TruncateBody":
      // A stream whose first bytes arrived is never retried (decision 6).
      return streamed ? final("StreamError") : fault.closeConnection ? retried("TransportError") : final("ResponseDecodeError")
    case "Delay":
      return retried(streamed ? "TimeoutError/first-byte" : "TimeoutError/request")
    case "CutStream":
    case "ErrorEvent":
      return streamed ? final("StreamError") : { _tag: "ok" }
    case "StallStream":
      return streamed ? final("TimeoutError/idle") : { _tag: "ok" }
  }
}

const isTimeout = (outcome: string | undefined) => outcome?.startsWith("TimeoutError/") === true

/**
 * What each attempt met, in the client's order. Without a timeout, attempt n
 * met the emulator's n-th record. An attempt the client saw time out met a
 * timeout, whatever its fault: on a loaded machine a time limit may overtake
 * any attempt (the call's duration is checked for it). The client may then
 * have sent the next attempt before the emulator read the one it abandoned,
 * so the records' order is not the attempts': every other attempt must then
 * be explained by a record of its own, taken from those not yet used.
 */
const metByAttempt = (
  attempts: ReadonlyArray<Emulator.Fault | undefined>,
  streamed: boolean,
  view: ReadonlyArray<string>
): ReadonlyArray<Met> => {
  if (!view.some(isTimeout)) return attempts.map((fault) => meet(fault, streamed))
  const unused = attempts.map((fault) => meet(fault, streamed))
  return view.map((outcome): Met => {
    if (isTimeout(outcome)) return { _tag: "error", error: outcome, retried: outcome !== "TimeoutError/idle" }
    const at = unused.findIndex((met) => (met._tag === "ok" ? "ok" : met.error) === outcome)
    return at === -1 ? { _tag: "error", error: `${outcome}, which no fault drawn calls for`, retried: false } : unused.splice(at, 1)[0]!
  })
}

/** The outcome the attempts call for, or why they could not have happened. */
const expectedOutcome = (attempts: ReadonlyArray<Emulator.Fault | undefined>, streamed: boolean, view: ReadonlyArray<string>) => {
  if (view.length !== attempts.length) return { impossible: `the client made ${view.length} attempts, the emulator saw ${attempts.length}` }
  const mets = metByAttempt(attempts, streamed, view)
  for (const [n, met] of mets.entries()) {
    const last = n === mets.length - 1
    if (met._tag === "ok") return last ? { outcome: "ok" } : { impossible: `attempt ${n + 1} succeeded but was retried` }
    if (!met.retried || n === MAX_RETRIES) {
      return last ? { outcome: met.error } : { impossible: `attempt ${n + 1} (${met.error}) was retried` }
    }
    if (last) return { impossible: `stopped after a retryable ${met.error} with retries left` }
  }
  return { impossible: "no attempt reached the emulator" }
}

const outcomeOf = (error: SwitchboardError.SwitchboardError): string =>
  error._tag === "TimeoutError" ? `TimeoutError/${error.phase}` : error._tag

// ---------------------------------------------------------------------------
// The calls
// ---------------------------------------------------------------------------

const chatModel = Emulator.chatMiniModel
const promptOf = (i: number) => `soak ${i} ${kindOf(i)}`
const chatRequest = (i: number): Protocol.ChatRequest => ({ model: chatModel, messages: [{ role: "user", content: promptOf(i) }] })

/**
 * `Retry.standard`, noting the outcome of each attempt it retries: with the
 * call's own outcome, how the client saw every attempt.
 */
const noting = (seen: Array<string>): Retry.Rule => (error, call) => {
  const retried = Retry.standard(error, call)
  if (retried) seen.push(outcomeOf(error))
  return retried
}

/** Runs call `i`; fails (as a defect) when a successful result is not the right one. */
const run = (
  i: number,
  taskIds: ReadonlyMap<number, string>,
  replyFor: (prompt: string) => string
): Effect.Effect<void, SwitchboardError.SwitchboardError, Chat.Chat | Embeddings.Embeddings | Moderations.Moderations | Videos.Videos> => {
  const check = (ok: boolean, what: string) => (ok ? Effect.void : Effect.die(new Error(`call ${i}: ${what}`)))
  switch (kindOf(i)) {
    case "chat":
      return Effect.flatMap(Chat.create(chatRequest(i)), (completion) =>
        check(completion.choices[0]?.message.content === replyFor(promptOf(i)), "wrong chat reply"))
    case "stream":
      return Effect.flatMap(Chat.accumulate(Chat.stream(chatRequest(i))), (completion) =>
        check(
          completion.choices[0]?.message.content === replyFor(promptOf(i)) && completion.choices[0]?.finish_reason === "stop",
          `a stream reported success without its full content: ${JSON.stringify(completion.choices[0])}`
        ))
    case "embed":
      return Effect.flatMap(Embeddings.create({ model: Emulator.embeddingModel, input: promptOf(i) }), (response) =>
        check(response.data.length === 1 && response.data[0]?.embedding.length === 256, "wrong embeddings"))
    case "moderate":
      return Effect.flatMap(Moderations.create({ input: promptOf(i) }), (response) =>
        check(response.results.length === 1 && response.results[0]?.flagged === false, "wrong moderation"))
    case "status": {
      const taskId = taskIds.get(i)!
      return Effect.flatMap(Videos.status(taskId), (update) => check(update.taskId === taskId, "wrong task"))
    }
  }
}

/** The call a recorded request belongs to, by its unique prompt or task id. */
const callOf = (request: Emulator.RecordedRequest, callByTask: ReadonlyMap<string, number>): number | undefined => {
  const body = request.body as Record<string, unknown> | null
  if (body === null || typeof body !== "object") return undefined
  const text = request.path === "/v1/chat/completions"
    ? (body["messages"] as ReadonlyArray<{ readonly content?: unknown }> | undefined)?.[0]?.content
    : request.path === "/v1/chat/task/status"
    ? undefined
    : body["input"]
  if (request.path === "/v1/chat/task/status") return callByTask.get(String(body["task_id"]))
  const match = typeof text === "string" ? /^soak (\d+) /.exec(text) : null
  return match ? Number(match[1]) : undefined
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0

describe("soak under faults", () => {
  it.live(`${CALLS} mixed calls at concurrency ${CONCURRENCY}, ${RATE * 100} % of responses faulted`, () =>
    Effect.gen(function*() {
      const emulator = yield* Emulator.Emulator

      // Unfaulted setup: the reply template and one video task per status call,
      // under the default 60 s timeout: on a loaded machine (the whole suite at
      // once) a submission, never retried once sent, can take over the soak's 2 s.
      const setup = NodeSwitchboard.layer({ baseUrl: emulator.url, apiKey: emulator.apiKey })
      const template = (yield* Effect.provide(Chat.create({ model: chatModel, messages: [{ role: "user", content: "soak template" }] }), setup))
        .choices[0]?.message.content ?? ""
      expect(template).toContain("soak template")
      const replyFor = (prompt: string) => template.replace("soak template", prompt)
      const statusCalls = Array.from({ length: CALLS }, (_, i) => i).filter((i) => kindOf(i) === "status")
      const submitted = yield* Effect.forEach(
        statusCalls,
        (i) => Effect.map(Videos.submit({ model: Emulator.videoModel, prompt: `soak task ${i}` }), (taskId) => [i, taskId] as const),
        { concurrency: CONCURRENCY }
      ).pipe(Effect.provide(setup))
      const taskIds = new Map(submitted)
      const callByTask = new Map(submitted.map(([i, taskId]) => [taskId as string, i]))

      yield* emulator.reset
      yield* emulator.setFaults({ rate: RATE, random: randomFaults, seed: SEED })

      const started = yield* Clock.currentTimeMillis
      const results = yield* Effect.forEach(
        Array.from({ length: CALLS }, (_, i) => i),
        (i) =>
          Effect.gen(function*() {
            const seen: Array<string> = []
            const t0 = yield* Clock.currentTimeMillis
            const exit = yield* Effect.exit(
              Effect.timeout(run(i, taskIds, replyFor).pipe(Switchboard.withRequestOptions({ retry: noting(seen) })), DEADLINE)
            )
            const t1 = yield* Clock.currentTimeMillis
            return { i, exit, seen, millis: t1 - t0 }
          }),
        { concurrency: CONCURRENCY }
      )
      const elapsed = (yield* Clock.currentTimeMillis) - started
      const requests = yield* emulator.requests
      yield* emulator.reset

      // Group the recorded attempts by call.
      const attempts = new Map<number, Array<Emulator.Fault | undefined>>()
      let unattributed = 0
      for (const request of requests) {
        const call = callOf(request, callByTask)
        if (call === undefined) {
          unattributed++
          continue
        }
        const list = attempts.get(call) ?? []
        list.push(request.fault)
        attempts.set(call, list)
      }

      const hangs: Array<number> = []
      const defects: Array<string> = []
      const mismatches: Array<string> = []
      const outcomes = new Map<string, number>()
      /** Attempts the client saw time out that their fault did not call for: the machine's load. */
      let loadTimeouts = 0
      /** Per fault: how often drawn, on a stream, left without effect, retried, or returned (by error). */
      const faultTable = new Map<string, { drawn: number; streams: number; noEffect: number; retried: number; returned: Map<string, number> }>()
      for (const { exit, i, millis, seen } of results) {
        const streamed = kindOf(i) === "stream"
        const met = attempts.get(i) ?? []
        for (const [n, fault] of met.entries()) {
          if (fault === undefined) continue
          const row = faultTable.get(label(fault)) ?? { drawn: 0, streams: 0, noEffect: 0, retried: 0, returned: new Map() }
          row.drawn++
          if (streamed) row.streams++
          const effect = meet(fault, streamed)
          if (effect._tag === "ok") row.noEffect++
          else if (n < met.length - 1) row.retried++
          else row.returned.set(effect.error, (row.returned.get(effect.error) ?? 0) + 1)
          faultTable.set(label(fault), row)
        }
        let outcome: string
        if (Exit.isSuccess(exit)) {
          outcome = "ok"
        } else if (Cause.hasDies(exit.cause) || Cause.hasInterrupts(exit.cause)) {
          defects.push(`call ${i} (${kindOf(i)}): ${Cause.pretty(exit.cause)}`)
          continue
        } else {
          const error = Option.getOrThrow(Cause.findErrorOption(exit.cause))
          if (Cause.isNoSuchElementError(error) || Cause.isTimeoutError(error)) {
            hangs.push(i)
            continue
          }
          if (!isSwitchboardError(error)) {
            defects.push(`call ${i}: untyped failure ${String(error)}`)
            continue
          }
          outcome = outcomeOf(error)
        }
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
        const view = [...seen, outcome]
        // A time limit fired only once it had passed: every timeout the client saw took one limit.
        const timeouts = view.filter(isTimeout).length
        if (millis < timeouts * LIMIT_MILLIS) mismatches.push(`call ${i}: ${timeouts} timeouts in ${millis} ms`)
        const faultTimeouts = met.map((fault) => meet(fault, streamed)).filter((m) => m._tag === "error" && isTimeout(m.error))
        loadTimeouts += Math.max(0, timeouts - faultTimeouts.length)
        const expected = expectedOutcome(met, streamed, view)
        if (!("outcome" in expected) || expected.outcome !== outcome) {
          mismatches.push(
            `call ${i} (${kindOf(i)}): got ${outcome}, attempts met [${(attempts.get(i) ?? []).map(label).join(", ")}]: ${
              "impossible" in expected ? expected.impossible : `expected ${expected.outcome}`
            }`
          )
        }
      }

      const byKind = new Map<Kind, { calls: number; ok: number }>()
      for (const { exit, i } of results) {
        const row = byKind.get(kindOf(i)) ?? { calls: 0, ok: 0 }
        row.calls++
        if (Exit.isSuccess(exit)) row.ok++
        byKind.set(kindOf(i), row)
      }
      const faulted = requests.filter((r) => r.fault !== undefined).length
      const latencies = results.map((r) => r.millis).sort((a, b) => a - b)
      // Sockets of aborted calls close asynchronously: give them a bounded moment.
      const settled = yield* Effect.timeoutOption(waitUntil(emulator.openConnections, (n) => n <= CONCURRENCY), "1 minute")
      const openAfter = yield* emulator.openConnections
      console.log(
        [
          `soak: ${CALLS} calls, concurrency ${CONCURRENCY}, fault rate ${RATE}, seed ${SEED}, ${elapsed} ms wall clock`,
          `requests ${requests.length} (retries ${requests.length - CALLS}), faulted ${faulted} (${
            ((100 * faulted) / requests.length).toFixed(1)
          } %), unattributed ${unattributed}`,
          `calls by kind: ${[...byKind].map(([kind, row]) => `${kind} ${row.calls} (${row.ok} ok)`).join(", ")}`,
          "| fault | drawn | on streams | no effect | retried | returned to the caller |",
          "|---|---|---|---|---|---|",
          ...[...faultTable].sort(([a], [b]) => a.localeCompare(b)).map(([kind, row]) =>
            `| ${kind} | ${row.drawn} | ${row.streams} | ${row.noEffect} | ${row.retried} | ${
              [...row.returned].map(([error, n]) => `${n} ${error}`).join(", ") || "0"
            } |`
          ),
          `outcomes: ${[...outcomes].sort(([, a], [, b]) => b - a).map(([tag, n]) => `${tag} ${n}`).join(", ")}`,
          `latency ms p50 ${percentile(latencies, 0.5)}, p99 ${percentile(latencies, 0.99)}, max ${latencies.at(-1)}`,
          `attempts timed out by the machine's load (their fault called for no timeout): ${loadTimeouts}`,
          `hangs ${hangs.length}, defects ${defects.length}, mismatches ${mismatches.length}, connections open after ${openAfter}`
        ].join("\n")
      )

      expect(results).toHaveLength(CALLS)
      expect(hangs).toEqual([])
      expect(defects).toEqual([])
      expect(mismatches.slice(0, 20)).toEqual([])
      expect(unattributed).toBe(0)
      expect(attempts.size).toBe(CALLS)
      // About the configured share of responses was faulted, and each fault kind was met.
      expect(faulted / requests.length).toBeGreaterThan(RATE * 0.8)
      expect(faulted / requests.length).toBeLessThan(RATE * 1.2)
      expect(faultTable.size).toBe(randomFaults.length)
      // Aborted calls closed their connections: at most one idle keep-alive
      // connection per concurrent call remains (a stalled stream left open would add one each).
      expect(Option.isSome(settled)).toBe(true)
      expect(openAfter).toBeLessThanOrEqual(CONCURRENCY)
    }).pipe(
      Effect.provide(emulated({
        retryBaseDelay: 0,
        maxRetries: MAX_RETRIES,
        timeout: LIMIT_MILLIS,
        streamFirstByteTimeout: LIMIT_MILLIS,
        streamIdleTimeout: LIMIT_MILLIS
      }, {
        // Every attempt is attributed to its call: keep them all, not the latest 10,000.
        limits: { recordedRequests: Number.POSITIVE_INFINITY }
      }))
    ), 600_000)
})
