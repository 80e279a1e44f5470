/**
 * Messages between the orchestrator (`main.ts`), the server and the clients,
 * and the specification of one client run.
 */

export type ParentToServer = { readonly type: "cpu"; readonly id: number } | { readonly type: "stop" }

export type ServerToParent =
  | { readonly type: "ready"; readonly port: number }
  | { readonly type: "cpu"; readonly id: number; readonly usage: NodeJS.CpuUsage }

/** Clients of the non-streaming chat figure. */
export type ChatClient =
  | "undici"
  | "openai"
  | "effect-http"
  | "switchboard"
  | "switchboard-forEach"
  | "switchboard-wire-undici"
  | "switchboard-wire-fetch"
/** Clients of the streaming figures. */
export type StreamClient =
  | "undici-sse"
  | "raw-stream"
  | "raw-stream-fold"
  | "openai"
  | "switchboard"
  | "switchboard-fold"
  | "switchboard-wire-undici"
  | "switchboard-wire-fetch"

/** Clients of the agent-load figure. */
export type LoadClient = "switchboard" | "ai" | "openai-agents"

interface Common {
  readonly port: number
  /** The run fails, rather than loops on, past this many milliseconds. */
  readonly timeLimitMs: number
}

export type ClientSpec =
  | Common & {
    readonly workload: "chat"
    readonly client: ChatClient
    readonly count: number
    readonly concurrency: number
    readonly warmup: number
  }
  | Common & {
    readonly workload: "stream"
    readonly client: StreamClient
    readonly streams: number
    readonly chunks: number
    readonly warmupStreams: number
  }
  | Common & {
    /** `streams` streams at once, `rounds` times over; the server paces them. */
    readonly workload: "concurrent-streams"
    readonly client: "undici-sse" | "openai" | "switchboard"
    readonly streams: number
    readonly chunks: number
    readonly warmupStreams: number
  }
  | Common & {
    readonly workload: "embed"
    readonly mode: "batched" | "per-input"
    readonly inputs: number
  }
  | Common & {
    readonly workload: "agent"
    readonly mode: "chat" | "agent-step"
    readonly count: number
    readonly concurrency: number
    readonly warmup: number
    readonly tools: number
  }
  | Common & {
    /**
     * `runs` agent runs of three steps started at once against the emulator
     * (two tool steps, then the answer), after `warmupRuns`; `port` is the emulator's.
     */
    readonly workload: "agent-load"
    readonly client: LoadClient
    readonly runs: number
    readonly warmupRuns: number
  }
  | Common & {
    /** `Agent.stream` drained, or served as the UI message stream through `UiServer`'s web handler and read to the end. */
    readonly workload: "serve"
    readonly mode: "agent-stream" | "encoded" | "served"
    readonly streams: number
    readonly chunks: number
    readonly warmupStreams: number
  }

/** What one client run measured, over its timed section only (CPU, time) or its whole life (RSS). */
export interface Measured {
  readonly elapsedMs: number
  /** Units done in the timed section: requests, chunks, inputs or steps. */
  readonly units: number
  readonly cpuUserMicros: number
  readonly cpuSystemMicros: number
  readonly extra?: Readonly<Record<string, number | string>>
}

export type ClientResult =
  | Measured & {
    readonly ok: true
    /** Highest `process.memoryUsage.rss()` sampled every 10 ms. */
    readonly sampledPeakRss: number
    /** `process.resourceUsage().maxRSS`, in bytes. */
    readonly maxRss: number
  }
  | { readonly ok: false; readonly error: string }

export type ClientToParent =
  | { readonly type: "result"; readonly result: ClientResult }
  /** Sent as the timed section starts and ends, so the parent can read the server's CPU over it. */
  | { readonly type: "phase"; readonly phase: "start" | "end" }
