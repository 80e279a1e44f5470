/**
 * `switchboard worker --database <url>`: a runner of the durable video
 * workflows (`@switchboard/workflow`), until Ctrl-C. On a sqlite file it is
 * the only runner; on Postgres, start one per machine (or more, each with its
 * own `--port`) and they share the work. Also the `--database` path of
 * `switchboard video`: start a workflow by key and wait for its video.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { SwitchboardError, type TaskPoller, type Videos } from "@switchboard/core"
import { NodeMedia } from "@switchboard/node"
import { Cluster, VideoWorkflow } from "@switchboard/workflow"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Connection from "../Connection.js"
import * as Errors from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

/**
 * The `--database` flag, shared with `switchboard video`.
 *
 * @since 0.1.0
 * @category flags
 */
export const databaseFlag = Options.text("database").pipe(
  Options.withPseudoName("url"),
  Options.withDescription("Run video tasks as durable workflows stored here: a sqlite file (sqlite:tasks.db) or postgres://…")
)

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

/** A flag's bad value, said as the flag. */
const usage = (e: { readonly field: string; readonly message: string }) => new Errors.UsageError({ message: `--${e.field} ${e.message}` })

const databaseOf = (url: string) => Effect.mapError(Cluster.parseDatabase(url), usage)

/**
 * A runner with the video workflow registered, over the SDK in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const runnerLayer = (options: WorkerOptions) =>
  Layer.unwrapEffect(
    Effect.map(databaseOf(options.database), (database) =>
      VideoWorkflow.layer(options.poll).pipe(
        Layer.provideMerge(Layer.mapError(Cluster.layerRunner({ database, host: options.host, port: options.port }), usage))
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
  Layer.unwrapEffect(
    Effect.map(databaseOf(options.database), (database) =>
      database._tag === "Sqlite" ? runnerLayer(options) : Layer.mapError(Cluster.layerClient({ database }), usage)
    )
  )

/**
 * Runs until interrupted, after saying where.
 *
 * @since 0.1.0
 * @category programs
 */
export const serve = (options: WorkerOptions) =>
  Effect.gen(function*() {
    const database = yield* databaseOf(options.database)
    yield* Output.line(
      database._tag === "Sqlite"
        ? `Switchboard worker running video workflows stored in ${database.filename} (the only runner on this file)`
        : `Switchboard worker running video workflows on Postgres, reachable by other runners at ${options.host ?? "127.0.0.1"}:${options.port ?? 24100}`
    )
    yield* Output.line(Output.dim("Ctrl-C stops it; unfinished workflows go on when a worker runs again."))
    return yield* Effect.never
  }).pipe(Effect.provide(runnerLayer(options)))

const narrate = (text: string) => Output.errorLine(text)

/** Waits for the end of the workflow with `key`, asking its storage every second. */
const awaitEnd = (key: string) =>
  VideoWorkflow.result(key).pipe(
    Effect.repeat({ until: (result) => result?._tag !== "Suspended" && result !== undefined, schedule: Schedule.spaced("1 second") }),
    Effect.zipRight(VideoWorkflow.result(key))
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
export const video = (options: WorkerOptions & { readonly key: string; readonly request?: Videos.SubmitRequest | undefined; readonly out: string }) =>
  Effect.gen(function*() {
    if (options.request !== undefined) {
      yield* VideoWorkflow.start(options.request, { key: options.key })
      yield* narrate(`Started video workflow ${options.key}; waiting for it (Ctrl-C leaves it running, stored in the database).`)
    } else if ((yield* VideoWorkflow.result(options.key)) === undefined) {
      return yield* new Errors.UsageError({ message: `No video workflow with key ${options.key} in ${options.database}.` })
    }
    const result = yield* awaitEnd(options.key)
    if (result?._tag !== "Complete") return yield* Effect.dieMessage("a finished workflow has no result")
    const video = yield* result.exit
    const extension = /\.(mp4|webm|mov|m4v)(?:$|[?#])/i.exec(video.videoUrl)?.[1]?.toLowerCase() ?? "mp4"
    const path = yield* NodeMedia.save(video.videoUrl, `${options.out}/${video.taskId}.${extension}`)
    yield* narrate(`Saved ${path} (task ${video.taskId})`)
    yield* Output.line(path)
  }).pipe(
    Effect.onInterrupt(() =>
      narrate(`Interrupted. The workflow goes on; follow it with: switchboard video --resume --key ${JSON.stringify(options.key)} --database …`)
    ),
    Effect.provide(clientLayer(options))
  )

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "worker",
  {
    database: databaseFlag,
    host: Options.text("host").pipe(Options.optional, Options.withDescription("Postgres fleet: the address other runners reach this one at (default 127.0.0.1)")),
    port: Options.integer("port").pipe(Options.optional, Options.withDescription("Postgres fleet: this runner's port, outside 32768–60999 (default 24100)")),
    pollInterval: Inputs.duration("poll-interval").pipe(Options.withPseudoName("duration"), Options.optional, Options.withDescription("Fixed wait between status calls (default: 1 s doubling up to 15 s)")),
    timeout: Inputs.duration("timeout").pipe(Options.withPseudoName("duration"), Options.optional, Options.withDescription("A task's deadline from its submission (default 10m)")),
    ...Connection.flags
  },
  (flags) =>
    Connection.run(
      flags,
      serve({
        database: flags.database,
        host: Option.getOrUndefined(flags.host),
        port: Option.getOrUndefined(flags.port),
        poll: {
          ...(Option.isSome(flags.pollInterval) ? { schedule: Schedule.spaced(flags.pollInterval.value) } : {}),
          ...(Option.isSome(flags.timeout) ? { deadline: flags.timeout.value } : {})
        }
      })
    )
).pipe(Command.withDescription("Run durable video workflows stored in --database (sqlite file or Postgres), until Ctrl-C"))
