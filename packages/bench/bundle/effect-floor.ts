// Bundle-size entry (src/bundle-size.ts): not a client, the floor under ours.
// What any Effect page that decodes with Schema and consumes a Stream pays
// before it makes a single request.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

const Delta = Schema.Struct({ content: Schema.String })

void Effect.runPromise(
  Stream.make({ content: "Hi" }, { content: "!" }).pipe(
    Stream.mapEffect(Schema.decodeUnknownEffect(Delta)),
    Stream.runForEach((delta) => Effect.sync(() => document.body.append(delta.content)))
  )
)
