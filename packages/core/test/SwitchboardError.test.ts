import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type * as Chat from "../src/Chat.js"
import type * as Embeddings from "../src/Embeddings.js"
import type * as Images from "../src/Images.js"
import * as SwitchboardError from "../src/SwitchboardError.js"

type ErrorOf<T> = T extends Effect.Effect<infer _A, infer E, infer _R> ? E
  : T extends Stream.Stream<infer _A, infer E, infer _R> ? E
  : never

describe("SwitchboardError", () => {
  it("every class declares the type id, and errorTags lists their tags", () => {
    for (const errorClass of SwitchboardError.errorClasses) {
      const error = new (errorClass as unknown as new(fields: object) => SwitchboardError.SwitchboardError)({
        message: "m",
        field: "f",
        sent: false,
        phase: "request",
        body: "",
        reason: "cut",
        limit: 1,
        taskId: "t",
        content: ""
      })
      expect(SwitchboardError.isSwitchboardError(error)).toBe(true)
      expect(error[SwitchboardError.TypeId]).toBe(SwitchboardError.TypeId)
      expect(SwitchboardError.errorTags).toContain(error._tag)
    }
    expect(SwitchboardError.errorTags).toHaveLength(SwitchboardError.errorClasses.length)
    expect(SwitchboardError.isSwitchboardError(new Error("m"))).toBe(false)
  })

  it("a status maps to its error", () => {
    expect(SwitchboardError.fromStatus({ message: "m", status: 429, retryAfterMillis: 5 })).toMatchObject({
      _tag: "RateLimitError",
      retryAfterMillis: 5
    })
    expect(SwitchboardError.fromStatus({ message: "m", status: 408 })).toMatchObject({ _tag: "TimeoutError", phase: "service" })
    expect(SwitchboardError.fromStatus({ message: "m", status: 413 })._tag).toBe("ClientError")
    expect(SwitchboardError.fromStatus({ message: "m", status: 599 })._tag).toBe("ServerError")
  })

  it("each capability's error type holds only what it can fail with", () => {
    type Embed = ErrorOf<ReturnType<typeof Embeddings.embedMany>>
    expectTypeOf<Embed>().toEqualTypeOf<SwitchboardError.RequestError>()
    expectTypeOf<Extract<Embed, { _tag: "TaskFailedError" | "NoImageInResponseError" | "StreamError" }>>().toBeNever()
    type Generate = ErrorOf<ReturnType<typeof Images.generate>>
    expectTypeOf<Generate>().toEqualTypeOf<SwitchboardError.RequestError | SwitchboardError.NoImageInResponseError>()
    type Streamed = ErrorOf<ReturnType<typeof Chat.stream>>
    expectTypeOf<Streamed>().toEqualTypeOf<SwitchboardError.StreamRequestError>()
    expectTypeOf<Extract<SwitchboardError.RequestError, { _tag: "TaskFailedError" | "JournalError" }>>().toBeNever()
  })
})
