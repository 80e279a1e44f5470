/**
 * Video generation as an asynchronous task (spec part 3, decision 3): a chat
 * request with `video-1` submits a task whose id is the completion's `id`;
 * `POST /v1/chat/task/status` with `{"task_id"}` moves it forward one poll at
 * a time. Progress is counted in polls, not time, so tests under a TestClock
 * see exactly the same sequence as a real run.
 *
 * @internal
 */
import type * as Protocol from "@switchboard/core/Protocol"
import * as Conversation from "./conversation.js"
import { shortHash } from "./hash.js"
import * as Files from "./files.js"
import { contentText } from "./text.js"

/** In-progress polls before the terminal state, by prompt keyword (documented in docs/emulator.md). */
const inProgressPolls = (prompt: string): number =>
  /\bstuck\b/i.test(prompt) ? Number.POSITIVE_INFINITY : /\bslow\b/i.test(prompt) ? 10 : 2

interface Task {
  readonly id: string
  readonly fails: boolean
  readonly inProgress: number
  polls: number
}

/**
 * @internal
 */
export interface Store {
  /** Records a task for the request and returns its id. */
  readonly submit: (request: Protocol.ChatRequest, seq: number) => string
  /** One poll: the status body, or `undefined` for an unknown id. */
  readonly poll: (taskId: string, baseUrl: string) => Readonly<Record<string, unknown>> | undefined
}

const promptOf = (request: Protocol.ChatRequest) =>
  contentText(request.messages[Conversation.lastUserIndex(request.messages)]?.content)

const statusOf = (task: Task, baseUrl: string): Readonly<Record<string, unknown>> => {
  const base = { task_id: task.id }
  if (task.polls <= task.inProgress) {
    const progress = Math.floor(((task.polls - 1) / Math.min(task.inProgress, 100)) * 100)
    return { ...base, status: task.polls === 1 ? "queued" : "processing", progress: Math.min(progress, 99) }
  }
  return task.fails
    ? { ...base, status: "failed", progress: 100, fail_reason: "The emulator was asked to fail this task." }
    : { ...base, status: "succeed", progress: 100, video_url: `${baseUrl}${Files.videoPath(task.id)}` }
}

/** Keeps the latest `limit` tasks: a poll of an older one gets 404 like an unknown id. */
export const makeStore = (limit: number): Store => {
  // A Map iterates in insertion order, so its first key is the oldest task.
  const tasks = new Map<string, Task>()
  return {
    submit: (request, seq) => {
      const prompt = promptOf(request)
      const id = `task_${shortHash(prompt)}_${String(seq).padStart(6, "0")}`
      tasks.set(id, { id, fails: /\bfail\b/i.test(prompt), inProgress: inProgressPolls(prompt), polls: 0 })
      for (const oldest of tasks.keys()) {
        if (tasks.size <= limit) break
        tasks.delete(oldest)
      }
      return id
    },
    poll: (taskId, baseUrl) => {
      const task = tasks.get(taskId)
      if (task === undefined) return undefined
      task.polls++
      return statusOf(task, baseUrl)
    }
  }
}

/** The submission reply's content. */
export const submitted = (request: Protocol.ChatRequest, taskId: string): string =>
  `Video task ${taskId} submitted for "${promptOf(request)}". Poll POST /v1/chat/task/status with {"task_id":"${taskId}"}.`
