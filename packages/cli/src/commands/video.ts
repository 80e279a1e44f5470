/**
 * `switchboard video`: submit a video task, show its progress while it is
 * polled, download the video. Every submitted task is kept in a file journal
 * until it ends, so a run stopped with Ctrl-C loses nothing:
 * `switchboard video --resume` finishes what earlier runs left.
 *
 * Narration and progress go to stderr; the saved file's path (or a status)
 * to stdout.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { SwitchboardError, TaskJournal, type TaskPoller, Videos } from "@switchboard/core"
import { NodeMedia } from "@switchboard/node"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as Connection from "../Connection.js"
import * as Errors from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Progress from "../Progress.js"
import * as Worker from "./worker.js"

/**
 * The emulator's video model; pass `--model` for the service's.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaultModel = "video-1"

/**
 * Where the journal lives unless `--journal` or `SWITCHBOARD_JOURNAL_DIR`
 * says otherwise, relative to the working directory.
 *
 * @since 0.1.0
 * @category defaults
 */
export const defaultJournal = ".switchboard/tasks"

/**
 * How a task is polled and where its video goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface FollowOptions {
  readonly out: string
  /** Fixed wait between status calls; default the SDK's backoff (1 s doubling to 15 s). */
  readonly interval?: Duration.Duration | undefined
  /** Give up polling (the task stays in the journal) after this long; default 10 minutes. */
  readonly timeout?: Duration.Duration | undefined
  /** Where progress is drawn; default stderr. */
  readonly target?: Output.Target | undefined
  readonly indent?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Saved {
  readonly taskId: string
  readonly url: string
  readonly path: string
  readonly bytes: number
}

/**
 * The SDK's poll options for the flags.
 *
 * @since 0.1.0
 * @category programs
 */
export const pollOptions = (options: Pick<FollowOptions, "interval" | "timeout">): TaskPoller.PollOptions<SwitchboardError.SwitchboardError> => ({
  ...(options.interval === undefined ? {} : { schedule: Schedule.spaced(options.interval) }),
  ...(options.timeout === undefined ? {} : { deadline: options.timeout })
})

const extensionOf = (url: string) => /\.(mp4|webm|mov|m4v)(?:$|[?#])/i.exec(url)?.[1]?.toLowerCase() ?? "mp4"

/**
 * Shows the updates as they come, then downloads the video of a succeeded
 * task into `out` as `<task id>.<ext>`. A failed task fails with
 * `TaskFailedError`.
 *
 * @since 0.1.0
 * @category programs
 */
export const follow = <E, R>(
  taskId: string,
  updates: Stream.Stream<TaskPoller.TaskUpdate, E, R>,
  options: FollowOptions
) =>
  Effect.gen(function*() {
    const last = yield* Effect.scoped(
      Effect.flatMap(
        Progress.make({ target: options.target, indent: options.indent }),
        (progress) => Stream.runLast(Stream.tap(updates, progress.update))
      )
    )
    if (Option.isNone(last) || last.value._tag === "InProgress") {
      return yield* new SwitchboardError.ResponseDecodeError({ message: `polling task ${taskId} ended before the task did`, body: "" })
    }
    const update = last.value
    if (update._tag === "Failed") {
      return yield* new SwitchboardError.TaskFailedError({
        message: `task ${taskId} failed${update.reason ? `: ${update.reason}` : ""}`,
        taskId,
        ...(update.reason === undefined ? {} : { reason: update.reason })
      })
    }
    const fs = yield* FileSystem.FileSystem
    const paths = yield* Path.Path
    const path = yield* NodeMedia.save(update.videoUrl, paths.join(options.out, `${taskId}.${extensionOf(update.videoUrl)}`))
    const bytes = yield* fs.stat(path).pipe(Effect.map((info) => Number(info.size)), Effect.orElseSucceed(() => 0))
    return { taskId, url: update.videoUrl, path, bytes } satisfies Saved
  })

/**
 * The command that finishes the tasks of a journal.
 *
 * @since 0.1.0
 * @category programs
 */
export const resumeHint = (journal: Journal) =>
  `switchboard video --resume${journal.fromFlag ? ` --journal ${JSON.stringify(journal.directory)}` : ""}`

/**
 * Where the journal is, and whether `--journal` said so (then the resume
 * hint repeats it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Journal {
  readonly directory: string
  readonly fromFlag: boolean
}

const narrate = (text: string) => Output.errorLine(text)
const savedLine = (saved: Saved) => `Saved ${saved.path} (${Output.bytes(saved.bytes)})`

/**
 * Submits one task (uninterruptibly, so Ctrl-C can never lose a task that
 * was sent but not yet recorded), then follows it. Ctrl-C while polling
 * leaves the task in the journal and says how to finish it.
 *
 * @since 0.1.0
 * @category programs
 */
export const submit = (
  options: FollowOptions & { readonly prompt: string; readonly model: string; readonly from?: string | undefined; readonly journal: Journal }
) =>
  Effect.gen(function*() {
    const image = options.from === undefined ? undefined : yield* Inputs.attachment(options.from)
    const taskId = yield* Effect.uninterruptible(
      Videos.submit({ model: options.model, prompt: options.prompt, ...(image === undefined ? {} : { image: image.url }) })
    )
    yield* Effect.gen(function*() {
      yield* narrate(`Submitted video task ${taskId} (${options.model}); it stays in the journal ${options.journal.directory} until it ends.`)
      const saved = yield* follow(taskId, Videos.poll(taskId, pollOptions(options)), options)
      yield* narrate(savedLine(saved))
      yield* Output.line(saved.path)
    }).pipe(
      Effect.onInterrupt(() =>
        narrate(`Interrupted. Task ${taskId} is still in the journal ${options.journal.directory}; finish it with: ${resumeHint(options.journal)}`)
      )
    )
  })

const ago = (millis: number) => (millis < 0 ? "just now" : `${Output.seconds(millis)} ago`)

/**
 * Finishes every task of the journal, one after the other. A task that
 * fails is reported and the others still run; the command then exits 1.
 *
 * @since 0.1.0
 * @category programs
 */
export const resume = (options: FollowOptions & { readonly journal: Journal }) =>
  Effect.gen(function*() {
    const pending = yield* Videos.resumePending(pollOptions(options))
    if (pending.length === 0) {
      return yield* narrate(`No unfinished video tasks in ${options.journal.directory}.`)
    }
    yield* narrate(
      `Resuming ${pending.length} unfinished video ${pending.length === 1 ? "task" : "tasks"} from ${options.journal.directory}`
    )
    let failed = 0
    for (const { entry, updates } of pending) {
      const now = yield* Clock.currentTimeMillis
      yield* narrate(`${entry.taskId} (${entry.model}), submitted ${ago(now - entry.submittedAt)}: "${Output.truncate(entry.prompt, 60)}"`)
      const outcome = yield* Effect.either(follow(entry.taskId, updates, options))
      if (outcome._tag === "Right") {
        yield* narrate(savedLine(outcome.right))
        yield* Output.line(outcome.right.path)
      } else {
        failed++
        const error = outcome.left
        yield* Output.errorLine(Errors.render(error, false))
        if (SwitchboardError.isSwitchboardError(error) && error._tag === "NotFoundError") {
          yield* narrate(`  The service does not know this task; drop it with: switchboard video --forget ${entry.taskId}`)
        }
      }
    }
    if (failed > 0) return yield* new Errors.Reported({ exitCode: Errors.ExitCode.failure })
  }).pipe(
    Effect.onInterrupt(() =>
      narrate(`Interrupted. Unfinished tasks stay in the journal ${options.journal.directory}; finish them with: ${resumeHint(options.journal)}`)
    )
  )

/**
 * One status call, printed as `<task id>  <state> [progress%] [video url]`.
 *
 * @since 0.1.0
 * @category programs
 */
export const status = (taskId: string) =>
  Effect.flatMap(Videos.status(taskId), (update) => {
    switch (update._tag) {
      case "InProgress":
        return Output.line(`${taskId}  ${update.status}${update.progress === undefined ? "" : `  ${Math.round(update.progress)}%`}`)
      case "Succeeded":
        return Output.line(`${taskId}  succeed  ${update.videoUrl}`)
      case "Failed":
        return Output.line(`${taskId}  failed${update.reason ? `  ${update.reason}` : ""}`)
    }
  })

/**
 * Drops a task from the journal without polling it.
 *
 * @since 0.1.0
 * @category programs
 */
export const forget = (taskId: string, journal: Journal) =>
  Effect.gen(function*() {
    const tasks = yield* TaskJournal.TaskJournal
    const entries = yield* tasks.list
    if (!entries.some((e) => e.taskId === taskId)) {
      return yield* new Errors.UsageError({ message: `Task ${taskId} is not in the journal ${journal.directory}.` })
    }
    yield* tasks.remove(taskId)
    yield* narrate(`Removed task ${taskId} from the journal ${journal.directory}.`)
  })

type Mode =
  | { readonly _tag: "Submit"; readonly prompt: string }
  | { readonly _tag: "Resume" }
  | { readonly _tag: "Status"; readonly taskId: string }
  | { readonly _tag: "Forget"; readonly taskId: string }

const modeOf = (flags: {
  readonly prompt: Option.Option<string>
  readonly resume: boolean
  readonly status: Option.Option<string>
  readonly forget: Option.Option<string>
  readonly from: Option.Option<string>
}): Effect.Effect<Mode, Errors.UsageError> => {
  const modes: Array<Mode> = [
    ...Option.toArray(Option.map(flags.prompt, (prompt): Mode => ({ _tag: "Submit", prompt }))),
    ...(flags.resume ? [{ _tag: "Resume" } as const] : []),
    ...Option.toArray(Option.map(flags.status, (taskId): Mode => ({ _tag: "Status", taskId }))),
    ...Option.toArray(Option.map(flags.forget, (taskId): Mode => ({ _tag: "Forget", taskId })))
  ]
  if (modes.length !== 1) {
    return new Errors.UsageError({
      message: modes.length === 0
        ? "Give a prompt to make a video, or --resume, --status <task-id> or --forget <task-id>."
        : "Give only one of: a prompt, --resume, --status <task-id>, --forget <task-id>."
    })
  }
  if (Option.isSome(flags.from) && modes[0]!._tag !== "Submit") {
    return new Errors.UsageError({ message: "--from goes with a prompt: it is the image to animate." })
  }
  return Effect.succeed(modes[0]!)
}

const journalOf = (flag: Option.Option<string>): Effect.Effect<Journal> =>
  Option.match(flag, {
    onSome: (directory) => Effect.succeed({ directory, fromFlag: true }),
    onNone: () =>
      Config.string("SWITCHBOARD_JOURNAL_DIR").pipe(
        Effect.map((directory) => ({ directory: directory === "" ? defaultJournal : directory, fromFlag: false })),
        Effect.orElseSucceed(() => ({ directory: defaultJournal, fromFlag: false }))
      )
  })

/** `--database`: a prompt, or `--resume --key`, as a durable workflow (`switchboard worker`). */
const durable = (
  database: string,
  mode: Mode,
  flags: Connection.Flags & { readonly key: Option.Option<string>; readonly model: string; readonly from: Option.Option<string> },
  follow: FollowOptions
) => {
  const request = mode._tag === "Submit" ? { model: flags.model, prompt: mode.prompt } : undefined
  const key = Option.getOrUndefined(flags.key)
  const usage = mode._tag === "Status" || mode._tag === "Forget" || Option.isSome(flags.from) || (key === undefined && request === undefined)
  return usage
    ? Errors.reported(flags.verbose)(new Errors.UsageError({ message: "--database goes with a prompt (without --from), or with --resume --key <key>." }))
    : Connection.run(flags, Effect.flatMap(Worker.fleet, (Fleet) => Fleet.video({ database, poll: pollOptions(follow), out: follow.out, key, request })))
}

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "video",
  {
    prompt: Args.text({ name: "prompt" }).pipe(Args.optional, Args.withDescription("What the video shows")),
    from: Options.text("from").pipe(Options.withPseudoName("file|url"), Options.optional, Options.withDescription("Image-to-video: the first frame, a file or an http(s) URL")),
    model: Options.text("model").pipe(Options.withDefault(defaultModel), Options.withDescription("The video model")),
    out: Options.text("out").pipe(Options.withPseudoName("dir"), Options.withDefault("."), Options.withDescription("Directory to save the video in")),
    journal: Options.text("journal").pipe(
      Options.withPseudoName("dir"),
      Options.optional,
      Options.withDescription(`Directory of the task journal (default: $SWITCHBOARD_JOURNAL_DIR, else ${defaultJournal})`)
    ),
    resume: Options.boolean("resume").pipe(Options.withDescription("Finish every task an earlier run left in the journal")),
    status: Options.text("status").pipe(Options.withPseudoName("task-id"), Options.optional, Options.withDescription("Print the status of a task once")),
    forget: Options.text("forget").pipe(Options.withPseudoName("task-id"), Options.optional, Options.withDescription("Drop a task from the journal")),
    pollInterval: Inputs.duration("poll-interval").pipe(
      Options.withPseudoName("duration"),
      Options.optional,
      Options.withDescription("Fixed wait between status calls, e.g. 2s (default: 1 s doubling up to 15 s)")
    ),
    timeout: Inputs.duration("timeout").pipe(
      Options.withPseudoName("duration"),
      Options.optional,
      Options.withDescription("Stop polling after this long, e.g. 30m; the task stays in the journal (default 10m)")
    ),
    database: Worker.databaseFlag.pipe(Options.optional),
    key: Options.text("key").pipe(Options.optional, Options.withDescription("With --database: the task's idempotency key (default: from the request)")),
    ...Connection.flags
  },
  (flags) =>
    Effect.gen(function*() {
      const [mode, journal] = yield* Errors.reported(flags.verbose)(Effect.zip(modeOf(flags), journalOf(flags.journal)))
      const follow = {
        out: flags.out,
        interval: Option.getOrUndefined(flags.pollInterval),
        timeout: Option.getOrUndefined(flags.timeout)
      }
      if (Option.isSome(flags.database)) return yield* durable(flags.database.value, mode, flags, follow)
      switch (mode._tag) {
        case "Status":
          return yield* Connection.run(flags, status(mode.taskId))
        case "Forget":
          return yield* Connection.run(flags, forget(mode.taskId, journal), { journalDirectory: journal.directory })
        case "Resume":
          return yield* Connection.run(flags, resume({ ...follow, journal }), { journalDirectory: journal.directory })
        case "Submit":
          return yield* Connection.run(
            flags,
            submit({ ...follow, prompt: mode.prompt, model: flags.model, from: Option.getOrUndefined(flags.from), journal }),
            { journalDirectory: journal.directory }
          )
      }
    })
).pipe(Command.withDescription("Make a video: submit, poll with a progress bar, download; --resume finishes interrupted runs"))
