/**
 * Reads a `.cpuprofile` written by `node --cpu-prof`: self time per frame and
 * per package.
 */
import * as fs from "node:fs"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}

interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
}

interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface Frame {
  readonly name: string
  /** `package/path:line`, shortened. */
  readonly where: string
  readonly group: string
  readonly selfMs: number
  /** Share of the busy (non-idle) time. */
  readonly share: number
}

export interface ProfileSummary {
  readonly totalMs: number
  readonly busyMs: number
  readonly top: ReadonlyArray<Frame>
  readonly groups: ReadonlyArray<{ readonly group: string; readonly selfMs: number; readonly share: number }>
}

/** `file:///…/node_modules/.pnpm/x/node_modules/effect/dist/esm/internal/core.js` → `effect/dist/esm/internal/core.js`. */
const shorten = (url: string): string => {
  if (url === "") return ""
  const nm = url.lastIndexOf("/node_modules/")
  if (nm !== -1) return url.slice(nm + "/node_modules/".length)
  const packages = url.lastIndexOf("/packages/")
  if (packages !== -1) return `@switchboard/${url.slice(packages + "/packages/".length)}`
  return url.replace(/^file:\/\//, "")
}

const groupOf = (url: string, name: string): string => {
  if (url === "") return name.startsWith("(") ? name : "(native)"
  if (url.startsWith("node:")) return "node internals"
  const short = shorten(url)
  if (short.startsWith("@switchboard/")) return short.split("/").slice(0, 2).join("/")
  if (short.startsWith("@")) return short.split("/").slice(0, 2).join("/")
  return short.split("/")[0]!
}

export const summarizeProfile = (path: string, topN = 20): ProfileSummary => {
  const profile = JSON.parse(fs.readFileSync(path, "utf8")) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfMicros = new Map<number, number>()
  // timeDeltas[i] is the time before sample i; charge it to the sample before.
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!
    const delta = profile.timeDeltas[i + 1] ?? 0
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta)
  }
  const frames = new Map<string, { name: string; where: string; group: string; micros: number }>()
  const groups = new Map<string, number>()
  let total = 0
  let idle = 0
  for (const [id, micros] of selfMicros) {
    const { callFrame } = byId.get(id)!
    total += micros
    const name = callFrame.functionName || "(anonymous)"
    if (name === "(idle)") {
      idle += micros
      continue
    }
    const where = callFrame.url === "" ? "" : `${shorten(callFrame.url)}:${callFrame.lineNumber + 1}`
    const key = `${name}@${where}`
    const group = groupOf(callFrame.url, name)
    const frame = frames.get(key) ?? { name, where, group, micros: 0 }
    frame.micros += micros
    frames.set(key, frame)
    groups.set(group, (groups.get(group) ?? 0) + micros)
  }
  const busy = Math.max(1, total - idle)
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    top: [...frames.values()]
      .sort((a, b) => b.micros - a.micros)
      .slice(0, topN)
      .map((f) => ({ name: f.name, where: f.where, group: f.group, selfMs: f.micros / 1000, share: f.micros / busy })),
    groups: [...groups.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([group, micros]) => ({ group, selfMs: micros / 1000, share: micros / busy }))
  }
}
