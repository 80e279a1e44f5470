/**
 * `switchboard video`: `generate` submits a video task, shows its progress
 * while it is polled and downloads the video (`switchboard video "prompt"` is
 * short for it); `resume` finishes what earlier runs left; `status` asks for
 * one task's state; `forget` drops a task from the journal. Every submitted
 * task is kept in a file journal until its video is saved, so a run stopped
 * with Ctrl-C, even during the download, loses nothing.
 *
 * Narration and progress go to stderr; the saved file's path (or a status)
 * to stdout.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import { SwitchboardError, TaskJournal, type TaskPoller, Videos } from "@switchboard/core"
import { NodeMedia } from "@switchboard/node"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
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

/**
 * Shows the updates as they come, then downloads the video of a succeeded
 * task into `out` as `<task id>.<ext>` and completes the task (it leaves
 * the journal once the file is written). A failed task fails with
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
    const done = yield* Effect.scoped(
      Effect.flatMap(
        Progress.make({ target: options.target, indent: options.indent }),
        (progress) => Videos.outcome(taskId, Stream.tap(updates, progress.update))
      )
    )
    const path = yield* NodeMedia.saveVideo(done, options.out)
    const fs = yield* FileSystem.FileSystem
    const bytes = yield* fs.stat(path).pipe(Effect.map((info) => Number(info.size)), Effect.orElseSucceed(() => 0))
    return { taskId, url: done.videoUrl, path, bytes } satisfies Saved
  })

/**
 * The command that finishes the tasks of a journal.
 *
 * @since 0.1.0
 * @category programs
 */
export const resumeHint = (journal: Journal) =>
  `switchboard video resume${journal.fromFlag ? ` --journal ${JSON.stringify(journal.directory)}` : ""}`

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

/**
 * A path as the user would type it: relative when under the working
 * directory, else absolute.
 */
const shown = (path: string) =>
  Effect.map(Path.Path, (paths) => {
    const relative = paths.relative(process.cwd(), path)
    return relative !== "" && !relative.startsWith("..") && !paths.isAbsolute(relative) ? relative : path
  })

const savedLine = (saved: Saved) => Effect.map(shown(saved.path), (path) => `Saved ${path} (${Output.bytes(saved.bytes)})`)

/**
 * A model named like a chat, image, embedding or moderation model is refused
 * before anything is paid for: its reply would not be a task.
 *
 * @since 0.1.0
 * @category programs
 */
export const checkModel = (model: string): Effect.Effect<void, Errors.UsageError> =>
  Videos.isKnownNonVideoModel(model)
    ? new Errors.UsageError({
      message: `--model ${model} is not a video model (its name is that of a chat, image, embedding or moderation model): ` +
        "nothing was sent. Pass a video model; `switchboard models` lists the models."
    })
    : Effect.void

/**
 * Submits one task (uninterruptibly, so Ctrl-C can never lose a task that
 * was sent but not yet recorded), then follows it. The journal keeps the
 * output directory, so `resume` saves there too. Ctrl-C while polling or
 * downloading leaves the task in the journal and says how to finish it.
 *
 * @since 0.1.0
 * @category programs
 */
export const submit = Effect.fn("switchboard.video.submit")(function*(
  options: FollowOptions & { readonly prompt: string; readonly model: string; readonly from?: string | undefined; readonly journal: Journal }
) {
  const image = options.from === undefined ? undefined : yield* Inputs.attachment(options.from)
  const paths = yield* Path.Path
  const taskId = yield* Effect.uninterruptible(
    Videos.submit(
      { model: options.model, prompt: options.prompt, ...(image === undefined ? {} : { image: image.url }) },
      { output: paths.resolve(options.out) }
    )
  )
  yield* Effect.gen(function*() {
    yield* narrate(
      `Submitted video task ${taskId} (${options.model}); it stays in the journal ${options.journal.directory} until its video is saved.`
    )
    const saved = yield* follow(taskId, Videos.poll(taskId, pollOptions(options)), options)
    yield* narrate(yield* savedLine(saved))
    yield* Output.line(saved.path)
  }).pipe(
    Effect.onInterrupt(() =>
      narrate(`Interrupted. Task ${taskId} is still in the journal ${options.journal.directory}; finish it with: ${resumeHint(options.journal)}`)
    )
  )
})

const ago = (millis: number) => (millis < 0 ? "just now" : `${Output.seconds(millis)} ago`)

/**
 * Finishes every task of the journal that no other running process
 * follows, one after the other, each saved where its first run was told to
 * (else `out`). A task that fails is reported and the others still run; the
 * command then exits 1. A record that could not be read is set aside and
 * reported.
 *
 * @since 0.1.0
 * @category programs
 */
export const resume = Effect.fn("switchboard.video.resume")(function*(options: FollowOptions & { readonly journal: Journal }) {
  const { busy, pending, quarantined } = yield* Videos.resumePending(pollOptions(options))
  for (const bad of quarantined) {
    yield* Output.errorLine(`✖ A journal record could not be read (${bad.message}); it was moved to ${bad.movedTo}`)
  }
  for (const entry of busy) yield* narrate(`${entry.taskId} is being followed by another running process; skipped.`)
  if (pending.length === 0) {
    yield* narrate(`No unfinished video tasks in ${options.journal.directory}.`)
  } else {
    yield* narrate(
      `Resuming ${pending.length} unfinished video ${pending.length === 1 ? "task" : "tasks"} from ${options.journal.directory}`
    )
  }
  let failed = quarantined.length
  for (const { entry, updates } of pending) {
    const now = yield* Clock.currentTimeMillis
    yield* narrate(`${entry.taskId} (${entry.model}), submitted ${ago(now - entry.submittedAt)}: "${Output.truncate(entry.prompt, 60)}"`)
    const outcome = yield* Effect.result(follow(entry.taskId, updates, { ...options, out: entry.output ?? options.out }))
    if (outcome._tag === "Success") {
      yield* narrate(yield* savedLine(outcome.success))
      yield* Output.line(yield* shown(outcome.success.path))
    } else {
      failed++
      yield* Output.errorLine(Errors.render(outcome.failure, false))
    }
  }
  if (failed > 0) return yield* new Errors.Reported({ exitCode: Errors.ExitCode.failure })
}, (self, options) =>
  Effect.onInterrupt(self, () =>
    narrate(`Interrupted. Unfinished tasks stay in the journal ${options.journal.directory}; finish them with: ${resumeHint(options.journal)}`)
  ))

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
export const forget = Effect.fn("switchboard.video.forget")(function*(taskId: string, journal: Journal) {
  const tasks = yield* TaskJournal.TaskJournal
  if (Option.isNone(yield* tasks.get(taskId))) {
    return yield* new Errors.UsageError({ message: `Task ${taskId} is not in the journal ${journal.directory}.` })
  }
  yield* tasks.remove(taskId)
  yield* narrate(`Removed task ${taskId} from the journal ${journal.directory}.`)
})

const journalOf = (flag: Option.Option<string>): Effect.Effect<Journal> =>
  Option.match(flag, {
    onSome: (directory) => Effect.succeed({ directory, fromFlag: true }),
    onNone: () =>
      Config.String("SWITCHBOARD_JOURNAL_DIR").pipe(
        Effect.map((directory) => ({ directory: directory === "" ? defaultJournal : directory, fromFlag: false })),
        Effect.orElseSucceed(() => ({ directory: defaultJournal, fromFlag: false }))
      )
  })

const journalFlag = Inputs.text("journal").pipe(
  Flag.withMetavar("dir"),
  Flag.optional,
  Flag.withDescription(`Directory of the task journal (default: $SWITCHBOARD_JOURNAL_DIR, else ${defaultJournal})`)
)

const pollFlags = {
  pollInterval: Inputs.duration("poll-interval", Inputs.minimumPollInterval).pipe(
    Flag.withMetavar("duration"),
    Flag.optional,
    Flag.withDescription("Fixed wait between status calls, e.g. 2s (default: 1 s doubling up to 15 s)")
  ),
  timeout: Inputs.duration("timeout").pipe(
    Flag.withMetavar("duration"),
    Flag.optional,
    Flag.withDescription("Stop polling after this long, e.g. 30m; the task stays in the journal (default 10m)")
  )
}

const followOf = (flags: { readonly out: string; readonly pollInterval: Option.Option<Duration.Duration>; readonly timeout: Option.Option<Duration.Duration> }) => ({
  out: flags.out,
  interval: Option.getOrUndefined(flags.pollInterval),
  timeout: Option.getOrUndefined(flags.timeout)
})

const durableFlags = {
  ...Worker.databaseFlags,
  key: Inputs.text("key").pipe(Flag.optional, Flag.withDescription("With --database: the task's idempotency key (default: from the request)"))
}

/**
 * `--database`: the task as a durable workflow (`switchboard worker`), for a
 * prompt (with `--from`, its first frame goes into the stored request) or
 * for `resume --key`.
 */
const durable = (
  database: Redacted.Redacted<string>,
  flags: Connection.Flags & { readonly key: Option.Option<string> },
  follow: FollowOptions,
  request?: { readonly model: string; readonly prompt: string; readonly from?: string | undefined }
) =>
  Connection.run(
    flags,
    Effect.gen(function*() {
      const Fleet = yield* Worker.fleet
      const image = request?.from === undefined ? undefined : yield* Inputs.attachment(request.from)
      return yield* Fleet.video({
        database,
        poll: pollOptions(follow),
        out: follow.out,
        key: Option.getOrUndefined(flags.key),
        request: request && { model: request.model, prompt: request.prompt, ...(image === undefined ? {} : { image: image.url }) }
      })
    })
  )

/**
 * `switchboard video generate "<prompt>"`.
 *
 * @since 0.1.0
 * @category commands
 */
export const generateCommand = Command.make(
  "generate",
  {
    prompt: Argument.String("prompt").pipe(Argument.withDescription("What the video shows")),
    from: Inputs.text("from").pipe(Flag.withMetavar("file|url"), Flag.optional, Flag.withDescription("Image-to-video: the first frame, a file or an http(s) URL")),
    model: Inputs.text("model").pipe(Flag.withDefault(defaultModel), Flag.withDescription("The video model")),
    out: Inputs.text("out").pipe(Flag.withMetavar("dir"), Flag.withDefault("."), Flag.withDescription("Directory to save the video in")),
    journal: journalFlag,
    ...pollFlags,
    ...durableFlags,
    ...Connection.flags
  },
  (flags) =>
    Effect.gen(function*() {
      const journal = yield* Errors.reported(flags.verbose)(Effect.tap(journalOf(flags.journal), () => checkModel(flags.model)))
      const database = yield* Errors.reported(flags.verbose)(Worker.databaseOf(flags, false))
      if (Option.isSome(database)) {
        const request = { model: flags.model, prompt: flags.prompt, from: Option.getOrUndefined(flags.from) }
        return yield* durable(database.value, flags, followOf(flags), request)
      }
      return yield* Connection.run(
        flags,
        submit({ ...followOf(flags), prompt: flags.prompt, model: flags.model, from: Option.getOrUndefined(flags.from), journal }),
        { journalDirectory: journal.directory }
      )
    })
).pipe(Command.withDescription("Make a video: submit, poll with a progress bar, download (short form: switchboard video \"<prompt>\")"))

/**
 * `switchboard video resume`.
 *
 * @since 0.1.0
 * @category commands
 */
export const resumeCommand = Command.make(
  "resume",
  {
    out: Inputs.text("out").pipe(
      Flag.withMetavar("dir"),
      Flag.withDefault("."),
      Flag.withDescription("Directory for videos whose first run named none (a task keeps the --out it was submitted with)")
    ),
    journal: journalFlag,
    ...pollFlags,
    ...durableFlags,
    ...Connection.flags
  },
  (flags) =>
    Effect.flatMap(Errors.reported(flags.verbose)(Worker.databaseOf(flags, false)), (database) =>
      Option.isSome(database)
        ? Option.isNone(flags.key)
          ? Errors.reported(flags.verbose)(new Errors.UsageError({ message: "resume --database needs --key <key>: the task to finish." }))
          : durable(database.value, flags, followOf(flags))
        : Effect.flatMap(journalOf(flags.journal), (journal) =>
          Connection.run(flags, resume({ ...followOf(flags), journal }), { journalDirectory: journal.directory })))
).pipe(Command.withDescription("Finish every task earlier runs left in the journal: poll, download, save where each was asked to go"))

/**
 * `switchboard video status <task-id>`.
 *
 * @since 0.1.0
 * @category commands
 */
export const statusCommand = Command.make(
  "status",
  { taskId: Argument.String("task-id").pipe(Argument.withDescription("The task to ask about")), ...Connection.flags },
  (flags) => Connection.run(flags, status(flags.taskId))
).pipe(Command.withDescription("Print the status of one task, once"))

/**
 * `switchboard video forget <task-id>`.
 *
 * @since 0.1.0
 * @category commands
 */
export const forgetCommand = Command.make(
  "forget",
  { taskId: Argument.String("task-id").pipe(Argument.withDescription("The task to drop")), journal: journalFlag, ...Connection.flags },
  (flags) =>
    Effect.flatMap(journalOf(flags.journal), (journal) =>
      Connection.run(flags, forget(flags.taskId, journal), { journalDirectory: journal.directory }))
).pipe(Command.withDescription("Drop a task from the journal without polling it"))

/**
 * The names of `video`'s subcommands.
 *
 * @since 0.1.0
 * @category commands
 */
export const subcommands: ReadonlyArray<string> = ["generate", "resume", "status", "forget"]

/**
 * `switchboard video "<prompt>" …` is short for `switchboard video generate
 * "<prompt>" …`: anything after `video` that is not a subcommand or a help
 * flag gets `generate` put in front of it; `video` alone shows its help.
 *
 * @since 0.1.0
 * @category arguments
 */
export const expandShortForm = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (args[2] !== "video") return args
  const next = args[3]
  // `video` alone asks what it can do: its help.
  if (next === undefined) return [...args, "--help"]
  if (subcommands.includes(next) || next === "--help" || next === "-h") return args
  return [...args.slice(0, 3), "generate", ...args.slice(3)]
}

/**
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("video").pipe(
  Command.withDescription("Video tasks: generate (or just: video \"<prompt>\"), resume, status <task-id>, forget <task-id>"),
  Command.withSubcommands([generateCommand, resumeCommand, statusCommand, forgetCommand])
)
