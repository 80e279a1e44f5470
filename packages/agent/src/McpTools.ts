/**
 * Tools from Model Context Protocol servers, for `Agent.run`, `Agent.stream`,
 * `Agent.resume`, `AgentWorkflow` and `LanguageModel.generateText` alike.
 *
 * The protocol is `effect/ai/McpClient`'s (stdio and streamable HTTP); this
 * module decides what the model sees and what a run may do:
 * - each server has a label, an optional name prefix, include/exclude
 *   filters, a per-call timeout and an approval policy from the tools' MCP
 *   annotations;
 * - names the service would refuse are mapped to ones it accepts, and the
 *   mapping (`names`) says which server and MCP tool each name calls; two
 *   tools with one name (across servers, or with a local tool) fail with a
 *   `ConfigurationError` naming both before any model request;
 * - arguments are checked against the tool's JSON Schema before the server
 *   sees them (the agent answers the model `invalid-arguments`);
 * - secrets given to a server (secret-named `headers` and `env` values) are
 *   redacted from what it says: results, failures, errors;
 * - results become text: images, audio and binary resources are described,
 *   `isError` and a server that dies mid-call are a tool failure the model
 *   reads (`McpToolError`), never a defect;
 * - servers live in the caller's scope: closing it ends the HTTP session and
 *   stops a stdio child (stdin closed, then SIGTERM, then SIGKILL).
 *
 * @since 1.1.0
 */
import { isSecretHeader, redactor } from "@switchboard/core/internal/secrets"
import { jsonProblem, maxRequestDepth } from "@switchboard/core/internal/validate"
import { ConfigurationError } from "@switchboard/core/SwitchboardError"
import * as McpClient from "effect/ai/McpClient"
import type * as McpClientError from "effect/ai/McpClientError"
import * as McpProtocol from "effect/ai/McpProtocol"
import type * as McpSchema from "effect/ai/McpSchema"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import type * as ByteSize from "effect/ByteSize"
import type * as Duration from "effect/Duration"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as JsonSchema from "effect/JsonSchema"
import * as ChildProcess from "effect/process/ChildProcess"
import type { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import * as Schema from "effect/Schema"
import * as SchemaRepresentation from "effect/SchemaRepresentation"
import type * as Scope from "effect/Scope"
import { ToolTimeout } from "./internal/annotations.js"

/**
 * Which tools of a server pause the run for a decision (as `needsApproval`),
 * read from their MCP annotations (`readOnlyHint`, `destructiveHint`; a tool
 * without them is, per the MCP specification, not read-only and destructive):
 * - `none`: no tool;
 * - `destructive`: tools that are not read-only and may destroy;
 * - `not-read-only`: every tool that is not read-only.
 *
 * Annotations are the server's claims: trust them as far as you trust it.
 *
 * @since 1.1.0
 * @category models
 */
export type ApprovalPolicy = "none" | "destructive" | "not-read-only"

/**
 * What every server takes.
 *
 * @since 1.1.0
 * @category models
 */
export interface ServerOptions {
  /** The server's label: in errors, in `names`, and as the MCP client's view of itself. */
  readonly name: string
  /** Put before each tool name the model sees (`files_` gives `files_read`). Default none. */
  readonly prefix?: string | undefined
  /** MCP tool names to keep; default all. */
  readonly include?: ReadonlyArray<string> | undefined
  /** MCP tool names to drop (after `include`). */
  readonly exclude?: ReadonlyArray<string> | undefined
  /**
   * The limit of one call (`Agent.ToolTimeout`): the model gets a `timeout` result (outside an agent run, as in
   * `LanguageModel.generateText`, the call fails with `McpToolError`). Default none.
   */
  readonly timeout?: Duration.Input | undefined
  /** Default `none`. */
  readonly approval?: ApprovalPolicy | undefined
  /** Time to connect and list the tools. Default 60 seconds. */
  readonly connectTimeout?: Duration.Input | undefined
  /** The largest message either side may send; a bigger result is a tool failure. Default 16 MiB. */
  readonly maxMessageBytes?: ByteSize.Input | undefined
  /** More tools than this fails the connection with `McpServerError`. Default 256. */
  readonly maxTools?: number | undefined
}

/**
 * A server started as a child process, speaking newline-delimited JSON-RPC
 * on its stdin and stdout. Its environment is `env` plus a few variables a
 * program needs to start (`PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`,
 * `TERM`), never the whole of the parent's: an API key in the parent's
 * environment does not reach the server unless given in `env`.
 *
 * @since 1.1.0
 * @category models
 */
export interface StdioServer extends ServerOptions {
  readonly _tag: "Stdio"
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly cwd?: string | undefined
}

/**
 * A server at a streamable HTTP endpoint; `headers` go with every request
 * (a bearer token, say).
 *
 * @since 1.1.0
 * @category models
 */
export interface HttpServer extends ServerOptions {
  readonly _tag: "Http"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * An MCP server to connect to: started over stdio, or reached over HTTP.
 *
 * @since 1.1.0
 * @category models
 */
export type Server = StdioServer | HttpServer

/**
 * An MCP server started as a child process and spoken to over its standard
 * input and output.
 *
 * @since 1.1.0
 * @category constructors
 */
export const stdio = (options: Omit<StdioServer, "_tag">): StdioServer => ({ ...options, _tag: "Stdio" })

/**
 * An MCP server reached over Streamable HTTP at an address.
 *
 * @since 1.1.0
 * @category constructors
 */
export const http = (options: Omit<HttpServer, "_tag">): HttpServer => ({ ...options, _tag: "Http" })

/**
 * A server could not be used: it did not start or answer, answered outside
 * the protocol (garbage, a wrong id, an invalid tool list), listed too many
 * tools, or a tool's schema is unusable (not an object, nested deeper than a
 * chat request may, `$ref` cycles). `server` is its label; `tool` the MCP
 * tool, when one is to blame.
 *
 * @since 1.1.0
 * @category errors
 */
export class McpServerError extends Schema.TaggedError<McpServerError>()("McpServerError", {
  server: Schema.String,
  tool: Schema.optional(Schema.String),
  reason: Schema.String
}) {
  override get message(): string {
    return `MCP server ${this.server}${this.tool === undefined ? "" : ` (tool ${this.tool})`}: ${this.reason}`
  }
}

/**
 * A call failed in a way the model can read and correct or work around: the
 * server said `isError` (`message` is its text), or the call could not be
 * completed (the server died, closed, or sent too much).
 *
 * @since 1.1.0
 * @category errors
 */
export class McpToolError extends Schema.TaggedError<McpToolError>()("McpToolError", {
  server: Schema.String,
  tool: Schema.String,
  message: Schema.String
}) {}

/**
 * What a model-facing name calls.
 *
 * @since 1.1.0
 * @category models
 */
export interface ToolName {
  /** The name the model sees and calls. */
  readonly name: string
  /** The server's label. */
  readonly server: string
  /** The tool's name on the server. */
  readonly tool: string
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly needsApproval: boolean
}

/**
 * An MCP tool as the model sees it: the server's JSON Schema, a text result,
 * `McpToolError` as its failure.
 *
 * @since 1.1.0
 * @category models
 */
export type McpTool = Tool.Tool<string, {
  readonly parameters: typeof Schema.Unknown
  readonly success: typeof Schema.String
  readonly failure: typeof McpToolError
  readonly failureMode: "error"
}>

/**
 * The tools of the servers (and the local ones given, `Local`), their
 * handlers bound: give `toolkit` to `Agent.run`, `Agent.stream`,
 * `Agent.resume`, `AgentWorkflow` or `LanguageModel.generateText` as it is.
 *
 * @since 1.1.0
 * @category models
 */
export interface McpToolkit<Local extends Tool.Any = never> {
  /** Local tools first, then each server's in its order. */
  readonly toolkit: Toolkit.WithHandler<Record<string, McpTool | Local>>
  /** Every MCP tool's model-facing name and where it goes. */
  readonly names: ReadonlyArray<ToolName>
}

/**
 * What `connect` takes: the MCP servers to start or reach, and tools of your
 * own to run beside theirs.
 *
 * @since 1.1.0
 * @category models
 */
export interface ConnectOptions<Local extends Record<string, Tool.Any> = {}> {
  readonly servers: ReadonlyArray<Server>
  /** Tools of your own in the same run; their names are checked against the servers'. */
  readonly local?: Toolkit.Toolkit<Local> | undefined
}

const namePattern = /^[A-Za-z0-9_-]{1,64}$/
const defaultMaxTools = 256
const inheritedEnv = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]

/**
 * Connects every server (one after the other, in order), lists and checks
 * their tools, and merges them with `local`, whose handlers it takes from
 * the context (`Effect.provide(LocalTools.toLayer(...))`). The connections
 * live in the current scope.
 *
 * @example
 * ```ts
 * import * as Agent from "@switchboard/agent/Agent"
 * import * as McpTools from "@switchboard/agent/McpTools"
 * import * as Effect from "effect/Effect"
 *
 * const program = Effect.gen(function*() {
 *   const mcp = yield* McpTools.connect({
 *     servers: [McpTools.stdio({ name: "files", command: "node", args: ["files-server.js"], prefix: "files_" })]
 *   })
 *   return yield* Agent.run({
 *     model: "gpt-4o-mini",
 *     messages: [{ role: "user", content: "What is in notes.txt?" }],
 *     toolkit: mcp.toolkit
 *   })
 * })
 * ```
 * @since 1.1.0
 * @category constructors
 */
export const connect = <Local extends Record<string, Tool.Any> = {}>(
  options: ConnectOptions<Local>
): Effect.Effect<
  McpToolkit<Local[keyof Local]>,
  McpServerError | ConfigurationError,
  Scope.Scope | ChildProcessSpawner | HttpClient.HttpClient | Tool.HandlersFor<Local>
> => connectAny(options as unknown as ConnectOptions<Record<string, Tool.Any>>) as Effect.Effect<
  McpToolkit<Local[keyof Local]>,
  McpServerError | ConfigurationError,
  Scope.Scope | ChildProcessSpawner | HttpClient.HttpClient | Tool.HandlersFor<Local>
>

const connectAny = Effect.fnUntraced(function*(options: ConnectOptions<Record<string, Tool.Any>>) {
  const owners = new Map<string, string>()
  const claim = (name: string, owner: string) => {
    const first = owners.get(name)
    if (first !== undefined) {
      return Effect.fail(
        new ConfigurationError({
          field: `tools.${name}`,
          message: `two tools are named "${name}": ${first} and ${owner}; give a server a prefix, or filter one out`
        })
      )
    }
    owners.set(name, owner)
    return Effect.void
  }
  for (const name of Object.keys(options.local?.tools ?? {})) yield* claim(name, `local tool ${name}`)
  const labels = new Set<string>()
  const tools: Array<McpTool> = []
  // Keys are a server's tool names: `__proto__` must be a key, not the prototype.
  const handlers: Record<string, (params: unknown) => Effect.Effect<string, McpToolError>> = Object.create(null)
  const names: Array<ToolName> = []
  for (const server of options.servers) {
    if (labels.has(server.name)) {
      return yield* new ConfigurationError({ field: "servers.name", message: `two servers are labelled "${server.name}"` })
    }
    labels.add(server.name)
    const prefix = server.prefix ?? ""
    if (prefix !== "" && !/^[A-Za-z0-9_-]{1,32}$/.test(prefix)) {
      return yield* new ConfigurationError({
        field: `servers.${server.name}.prefix`,
        message: "a prefix must be 1-32 letters, digits, _ or -"
      })
    }
    const client = yield* open(server)
    const listed = yield* listTools(server, client)
    for (const descriptor of listed) {
      const name = modelName(prefix + descriptor.name)
      yield* claim(name, `tool ${descriptor.name} of MCP server ${server.name}`)
      const made = yield* makeTool(server, client, descriptor, name)
      tools.push(made.tool)
      handlers[name] = made.handler
      names.push(made.entry)
    }
  }
  const mcp = Toolkit.make(...tools) as unknown as Toolkit.Toolkit<Record<string, McpTool>>
  const bound = yield* mcp.toHandlers(handlers)
  const merged = (options.local === undefined ? mcp : Toolkit.merge(options.local, mcp)) as Toolkit.Toolkit<Record<string, Tool.Any>>
  // The local tools' handlers are the caller's; the MCP tools' are bound here.
  const toolkit = yield* merged.pipe(Effect.updateContext((context: Context.Context<never>) => Context.merge(context, bound)))
  return { toolkit: toolkit as unknown as Toolkit.WithHandler<Record<string, McpTool>>, names } satisfies McpToolkit
})

/**
 * The name the model sees for an MCP tool name (after its prefix): as it is
 * when the service accepts it; otherwise other characters become `_`, and a
 * name longer than 64 is cut to 55 and given `_` and a hash of the whole.
 *
 * @since 1.1.0
 * @category names
 */
export const modelName = (name: string): string => {
  if (namePattern.test(name)) return name
  const safe = name.replace(/[^A-Za-z0-9_-]/g, "_")
  return safe.length === 0 ? `tool_${fnv1a(name)}` : safe.length <= 64 ? safe : `${safe.slice(0, 55)}_${fnv1a(name)}`
}

const fnv1a = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

const describeClientError = (error: McpClientError.McpClientError) => `${error.reason._tag}: ${error.message}`

/**
 * What a server says, without the secrets it was given: the values of its
 * headers or environment variables named as secrets (core's rule: `auth`,
 * `key`, `token`...), a `Bearer` credential alone too. A server may echo
 * them, and what it says reaches errors, logs and the model.
 */
const redactorOf = (server: Server): ((text: string) => string) => {
  const given = (server._tag === "Http" ? server.headers : server.env) ?? {}
  return redactor(
    Object.entries(given)
      .filter(([name]) => isSecretHeader(name))
      .flatMap(([, value]) => [value, ...(/^\S+ +(\S+)$/.exec(value)?.slice(1) ?? [])])
  )
}

const serverError = (server: Server, tool?: string) => (error: McpClientError.McpClientError) =>
  new McpServerError({ server: server.name, tool, reason: redactorOf(server)(describeClientError(error)) })

/** The parent's environment, where there is one (this module loads in a browser too; stdio needs Node). */
const parentEnv = (): Readonly<Record<string, string | undefined>> =>
  (globalThis as { readonly process?: { readonly env: Record<string, string | undefined> } }).process?.env ?? {}

const childEnv = (server: StdioServer): Record<string, string> => {
  const env: Record<string, string> = {}
  const parent = parentEnv()
  for (const key of inheritedEnv) {
    const value = parent[key]
    if (value !== undefined) env[key] = value
  }
  return { ...env, ...server.env }
}

/** The client, in the current scope: its finalizer ends the HTTP session or stops the child. */
const open = (server: Server): Effect.Effect<McpClient.McpClient, McpServerError, Scope.Scope | ChildProcessSpawner | HttpClient.HttpClient> => {
  const identity = { name: `switchboard-agent (${server.name})`, version: "1.1.0", timeout: server.connectTimeout }
  const protocol = McpProtocol.v2025_11_25
  const transport: Effect.Effect<McpClient.Transport, McpClientError.McpClientError, Scope.Scope | ChildProcessSpawner | HttpClient.HttpClient> = server._tag === "Stdio"
    ? McpClient.stdio({
      command: ChildProcess.make(server.command, [...(server.args ?? [])], { env: childEnv(server), cwd: server.cwd }),
      protocol,
      maxMessageBytes: server.maxMessageBytes
    })
    : McpClient.http({ url: server.url, headers: server.headers, protocol, maxMessageBytes: server.maxMessageBytes })
  return transport.pipe(
    Effect.flatMap((t) => Effect.provideService(McpClient.make(identity), McpClient.Transport, t)),
    Effect.mapError(serverError(server))
  )
}

const listTools = Effect.fnUntraced(function*(server: Server, client: McpClient.McpClient) {
  const all = yield* Effect.mapError(client.listTools(), serverError(server))
  const include = server.include === undefined ? undefined : new Set(server.include)
  const exclude = new Set(server.exclude ?? [])
  const kept = all.filter((tool) => (include === undefined || include.has(tool.name)) && !exclude.has(tool.name))
  const max = server.maxTools ?? defaultMaxTools
  if (kept.length > max) {
    return yield* new McpServerError({ server: server.name, reason: `lists ${kept.length} tools, more than maxTools (${max})` })
  }
  return kept
})

/** The approval a tool's annotations call for under the server's policy. */
const approvalOf = (policy: ApprovalPolicy, readOnly: boolean, destructive: boolean) =>
  policy === "not-read-only" ? !readOnly : policy === "destructive" ? !readOnly && destructive : false

const makeTool = Effect.fnUntraced(function*(
  server: Server,
  client: McpClient.McpClient,
  descriptor: McpSchema.Tool,
  name: string
) {
  const schema = descriptor.inputSchema as unknown as Record<string, unknown>
  if (schema["type"] !== "object") {
    return yield* new McpServerError({ server: server.name, tool: descriptor.name, reason: "its input schema is not an object schema" })
  }
  // Checked as the chat request carries it (the service's bound): much deeper would overflow a stack here.
  if (jsonProblem({ tools: [{ function: { parameters: schema } }] }) !== undefined) {
    return yield* new McpServerError({
      server: server.name,
      tool: descriptor.name,
      reason: `its input schema nests deeper than a chat request may (${maxRequestDepth} levels)`
    })
  }
  const cycle = refCycle(schema)
  if (cycle !== undefined) {
    return yield* new McpServerError({ server: server.name, tool: descriptor.name, reason: `its input schema has a $ref cycle (${cycle})` })
  }
  const readOnly = descriptor.annotations?.readOnlyHint === true
  const destructive = !readOnly && descriptor.annotations?.destructiveHint !== false
  const needsApproval = approvalOf(server.approval ?? "none", readOnly, destructive)
  const base = Tool.dynamic(name, {
    description: descriptor.description ?? descriptor.title,
    parameters: schema as JsonSchema.JsonSchema,
    success: Schema.String,
    failure: McpToolError,
    needsApproval
  }).annotate(Tool.Strict, false).annotate(Tool.Readonly, readOnly).annotate(Tool.Destructive, destructive)
  const timed = server.timeout === undefined ? base : base.annotate(ToolTimeout, server.timeout)
  // The model sees the server's own JSON Schema; arguments are read with a
  // schema imported from it (a clone as `Tool`'s setters make), so that bad
  // arguments go back to the model and never reach the server.
  const tool: McpTool = Object.assign(Object.create(Object.getPrototypeOf(timed)), timed, {
    parametersSchema: validator(schema)
  })
  const redact = redactorOf(server)
  const failure = (message: string) => new McpToolError({ server: server.name, tool: descriptor.name, message: redact(message) })
  // The deadline is the client's too: `LanguageModel.generateText` calls the handler without the agent's `ToolTimeout`
  // (in a run, the agent's timer, started first, ends the call first: the model gets `timeout`).
  const handler = (params: unknown) =>
    client.callTool({ tool: descriptor, arguments: params as Record<string, unknown> }, { timeout: server.timeout }).pipe(
      Effect.mapError((error) => failure(describeClientError(error))),
      Effect.flatMap((result) => result.isError === true ? Effect.fail(failure(toText(result))) : Effect.succeed(redact(toText(result))))
    )
  return {
    tool,
    handler,
    entry: { name, server: server.name, tool: descriptor.name, readOnly, destructive, needsApproval }
  }
})

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The reference a `$ref` names in this document, or `undefined` for an external one. */
const refTarget = (ref: string): string | undefined => {
  if (ref === "#") return "#"
  const match = /^#\/(\$defs|definitions)\/([^/]+)/.exec(ref)
  return match === null ? undefined : `${match[1]}/${match[2]}`
}

/**
 * A cycle of local `$ref`s (a definition reaching itself), as `a -> b -> a`,
 * or `undefined`. A model, or a program building arguments from the schema,
 * could follow one forever.
 *
 * @since 1.1.0
 */
const refCycle = (schema: Record<string, unknown>): string | undefined => {
  const nodes = new Map<string, unknown>([["#", schema]])
  for (const key of ["$defs", "definitions"] as const) {
    const defs = schema[key]
    if (isRecord(defs)) for (const [name, def] of Object.entries(defs)) nodes.set(`${key}/${name}`, def)
  }
  const refsOf = (node: unknown, out: Set<string>, skipDefs: boolean): Set<string> => {
    if (Array.isArray(node)) for (const item of node) refsOf(item, out, false)
    else if (isRecord(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (skipDefs && (key === "$defs" || key === "definitions")) continue
        if (key === "$ref" && typeof value === "string") {
          const target = refTarget(value)
          if (target !== undefined && nodes.has(target)) out.add(target)
        } else refsOf(value, out, false)
      }
    }
    return out
  }
  const edges = new Map(Array.from(nodes, ([name, node]) => [name, refsOf(node, new Set(), name === "#")]))
  const state = new Map<string, "visiting" | "done">()
  const visit = (name: string, path: ReadonlyArray<string>): string | undefined => {
    if (state.get(name) === "done") return undefined
    if (state.get(name) === "visiting") return [...path.slice(path.indexOf(name)), name].join(" -> ")
    state.set(name, "visiting")
    for (const next of edges.get(name) ?? []) {
      const found = visit(next, [...path, name])
      if (found !== undefined) return found
    }
    state.set(name, "done")
    return undefined
  }
  for (const name of nodes.keys()) {
    const found = visit(name, [])
    if (found !== undefined) return found
  }
  return undefined
}

const AnyObject = Schema.Record(Schema.String, Schema.Unknown)

/**
 * The arguments' schema, imported from the JSON Schema with Effect's
 * importer (patterns not applied: a server's regular expression is not run
 * here); a schema it cannot import is checked as an object only.
 */
const validator = (schema: Record<string, unknown>): Schema.Top => {
  try {
    return SchemaRepresentation.fromJsonSchemaDocument(JsonSchema.fromSchemaDraft2020_12(schema as JsonSchema.JsonSchema), {
      patterns: "ignore"
    })
  } catch {
    return AnyObject
  }
}

/** Tool messages are text: text goes as it is, anything else is described; structured content alone, as JSON. */
const toText = (result: McpSchema.CallToolResult): string => {
  const parts = result.content.map((block) => {
    switch (block.type) {
      case "text":
        return block.text
      case "image":
      case "audio":
        return `[${block.type} ${block.mimeType}, ${block.data.length} bytes]`
      case "resource_link":
        return `[resource ${block.title ?? block.name}: ${block.uri}${block.description === undefined ? "" : ` — ${block.description}`}]`
      case "resource": {
        const resource = block.resource
        return "text" in resource
          ? resource.text
          : `[resource ${resource.uri}${resource.mimeType === undefined ? "" : ` ${resource.mimeType}`}, ${resource.blob.length} bytes]`
      }
      default:
        return "[content the agent cannot show]"
    }
  })
  if (parts.length > 0 || result.structuredContent === undefined) return parts.join("\n")
  // Deeper than a request may nest, JSON.stringify would overflow its stack.
  return jsonProblem(result.structuredContent) === undefined
    ? JSON.stringify(result.structuredContent)
    : `[structured content nested deeper than ${maxRequestDepth} levels]`
}
