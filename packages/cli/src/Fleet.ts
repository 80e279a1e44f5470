/**
 * What `switchboard worker` and `switchboard video --database` run, over
 * `@switchboard/workflow`: imported only when one of them runs, so other
 * commands start without effect's cluster and workflow modules and the SQL clients.
 *
 * @since 0.1.0
 */
import { type SwitchboardError, type TaskPoller, type Videos } from "@switchboard/core"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as Path from "effect/Path"
import { NodeMedia } from "@switchboard/node"
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Errors from "./Errors.js"
import * as Output from "./Output.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface WorkerOptions {
  readonly database: string
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly poll: TaskPoller.PollOptions<SwitchboardError.SwitchboardError>
}

/** A flag's bad value, said as the flag; a database that cannot be used stays a `DatabaseError`. */
const usage = (e: ConfigurationError) => new Errors.UsageError({ message: `--${e.field} ${e.message}` })

const databaseOf = (url: string) => Effect.mapError(Cluster.parseDatabase(url), usage)

/** A layer whose `ConfigurationError` is said as the flag (effect 4 has no `Layer.mapError`). */
const withUsage = <A>(layer: Layer.Layer<A, ConfigurationError | Cluster.DatabaseError>) =>
  Layer.catchTag(layer, "ConfigurationError", (e) => Layer.unwrap<unknown, never, never, Errors.UsageError, never>(Effect.fail(usage(e))))

/**
 * A runner with the video workflow registered, over the SDK in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const runnerLayer = (options: WorkerOptions) =>
  Layer.unwrap(
    Effect.map(databaseOf(options.database), (database) =>
      VideoWorkflow.layer(options.poll).pipe(
        Layer.provideMerge(withUsage(Cluster.layerRunner({ database, host: options.host, port: options.port })))
      )
    )
  )

/**
 * Where workflows are started from: the runner itself on sqlite (one process
 * owns the file), a client of the fleet on Postgres.
 *
 * @since 0.1.0
 * @category layers
 */
export const clientLayer = (options: WorkerOptions) =>
  Layer.unwrap(
    Effect.map(databaseOf(options.database), (database) =>
      database._tag === "Sqlite" ? runnerLayer(options) : withUsage(Cluster.layerClient({ database }))
    )
  )

/**
 * Runs until interrupted, after saying where.
 *
 * @since 0.1.0
 * @category programs
 */
export const serve = Effect.fn("switchboard.worker.serve")(function*(options: WorkerOptions) {
  const database = yield* databaseOf(options.database)
  yield* Output.line(
    database._tag === "Sqlite"
      ? `Switchboard worker running video workflows stored in ${database.filename} (the only runner on this file)`
      : `Switchboard worker running video workflows on Postgres ${Cluster.addressOf(database)}, reachable by other runners at ${
        options.host ?? "127.0.0.1"
      }:${options.port ?? 24100}`
  )
  yield* Output.line(Output.dim("Ctrl-C stops it; unfinished workflows go on when a worker runs again."))
  return yield* Effect.never
}, (self, options) => Effect.provide(self, runnerLayer(options)))

const narrate = (text: string) => Output.errorLine(text)

/** Waits for the end of the workflow with `key`, asking its storage every second. */
const awaitEnd = (key: string) =>
  VideoWorkflow.result(key).pipe(
    Effect.repeat({ until: (result) => result?._tag !== "Suspended" && result !== undefined, schedule: Schedule.spaced("1 second") }),
    Effect.andThen(VideoWorkflow.result(key))
  )

/**
 * `switchboard video --database`: starts the workflow for the request under
 * `key` (or, without a request, finds the one with `key`), waits for its
 * end, saves the video into `out` and prints its path. Ctrl-C leaves the
 * workflow to the runners (on sqlite: to the next run with this key).
 *
 * @since 0.1.0
 * @category programs
 */
export const video = (
  options: WorkerOptions & { readonly key?: string | undefined; readonly request?: Videos.SubmitRequest | undefined; readonly out: string }
) => {
  const key = options.key ?? (options.request === undefined ? "" : VideoWorkflow.keyOf(options.request))
  return Effect.gen(function*() {
    if (options.request !== undefined) {
      yield* VideoWorkflow.start(options.request, { key })
      yield* narrate(`Started video workflow ${key}; waiting for it (Ctrl-C leaves it running, stored in the database).`)
    } else if ((yield* VideoWorkflow.result(key)) === undefined) {
      const database = yield* databaseOf(options.database)
      return yield* new Errors.UsageError({ message: `No video workflow with key ${key} in ${Cluster.addressOf(database)}.` })
    }
    const result = yield* awaitEnd(key)
    if (result?._tag !== "Complete") return yield* Effect.die(new Error("a finished workflow has no result"))
    const video = yield* result.exit
    const paths = yield* Path.Path
    const path = yield* NodeMedia.save(video.videoUrl, paths.join(options.out, NodeMedia.videoFileName(video.taskId, video.videoUrl)))
    yield* narrate(`Saved ${path} (task ${video.taskId})`)
    yield* Output.line(path)
  }).pipe(
    Effect.onInterrupt(() =>
      narrate(`Interrupted. The workflow goes on; follow it with: switchboard video resume --key ${JSON.stringify(key)} --database …`)
    ),
    Effect.provide(clientLayer(options))
  )
}

