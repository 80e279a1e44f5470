/**
 * Every status from 400 to 599 (and the redirects) over real HTTP: the error
 * it becomes and whether it was retried. Only 408, 409, 429 and 5xx are
 * retried (docs/errors-and-retries.md).
 */
import { describe, expect, it } from "@effect/vitest"
import { Chat, type Protocol } from "@switchboard/core"
import * as Effect from "effect/Effect"
import { against, json } from "./hostile.js"
import { expectedErrorTag } from "@switchboard/test-support/Statuses"

const hello = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] } satisfies Protocol.ChatRequest

const retried = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

describe("every status has its class", () => {
  it.live("400–599: the tag, the status and whether it was retried", () => {
    let status = 0
    return against(
      (_request, response) => json(response, status, { error: { message: `answered ${status}` } }),
      (server) =>
        Effect.gen(function*() {
          const seen: Array<string> = []
          for (status = 400; status < 600; status++) {
            const before = server.requests()
            const error = yield* Effect.flip(Chat.create(hello))
            const attempts = server.requests() - before
            seen.push(`${status} ${error._tag} ${attempts}`)
            expect(error._tag, `status ${status}`).toBe(expectedErrorTag(status))
            expect(attempts, `attempts for ${status}`).toBe(retried(status) ? 2 : 1)
            expect(error.message).toContain(`answered ${status}`)
            if (status !== 408) expect(error).toHaveProperty("status", status)
          }
          expect(seen).toHaveLength(200)
        }),
      { maxRetries: 1 }
    )
  })

  it.live("413 says the request was too large", () =>
    against(
      (_request, response) => json(response, 413, { error: { message: "payload exceeds 1 MB" } }),
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Chat.create(hello))
          expect(error).toMatchObject({ _tag: "ClientError", status: 413 })
          expect(error.message).toBe("request too large: payload exceeds 1 MB")
        })
    ))

  it.live("a redirect on an API call is a ClientError, not a success, and not followed", () =>
    Effect.gen(function*() {
      for (const status of [301, 302, 303, 307, 308]) {
        yield* against(
          (_request, response) => {
            response.writeHead(status, { location: "https://elsewhere.example/v1/chat/completions" })
            response.end()
          },
          (server) =>
            Effect.gen(function*() {
              const error = yield* Effect.flip(Chat.create(hello))
              expect(error).toMatchObject({ _tag: "ClientError", status })
              expect(error.message).toContain("https://elsewhere.example/v1/chat/completions")
              expect(server.requests()).toBe(1)
            })
        )
      }
    }))
})
