import { UiServer } from "@switchboard/agent"
import { NodeSwitchboard } from "@switchboard/node"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const GetWeather = Tool.make("get_weather", {
  parameters: Schema.Struct({ city: Schema.String }),
  success: Schema.Struct({ city: Schema.String, celsius: Schema.Finite })
})
const SendEmail = Tool.make("send_email", {
  parameters: Schema.Struct({ to: Schema.String }),
  success: Schema.Struct({ sent: Schema.Boolean }),
  needsApproval: true
})
const toolkit = Toolkit.make(GetWeather, SendEmail)
const handlers = toolkit.toLayer({
  get_weather: ({ city }) => Effect.succeed({ city, celsius: 21 }),
  send_email: () => Effect.succeed({ sent: true })
})

// A web handler (Request → Response): what a Next.js route, Deno or Bun serves at /api/chat.
const { handler, dispose } = UiServer.toWebHandler(
  UiServer.agent({ model: "gpt-4o-mini", toolkit }),
  Layer.mergeAll(NodeSwitchboard.layerConfig(), handlers, UiServer.layerMemory())
)

// What useChat posts, and the parts it reads back.
interface Part {
  readonly type: string
  readonly toolName?: string
  readonly toolCallId?: string
  readonly approvalId?: string
  readonly input?: unknown
  readonly output?: unknown
  readonly delta?: string
}
const post = async (messages: ReadonlyArray<unknown>): Promise<Array<Part>> => {
  const response = await handler(
    new Request("http://127.0.0.1/api/chat", {
      method: "POST",
      body: JSON.stringify({ id: "chat-1", messages, trigger: "submit-message" })
    })
  )
  const text = await response.text()
  if (response.status !== 200) {
    console.log(response.status, text)
    return []
  }
  const parts = text.split("\n\n").filter((frame) => frame.startsWith("data: {")).map((frame): Part => JSON.parse(frame.slice(6)))
  const names = parts.map((part) => part.type + (part.toolName ? ` ${part.toolName}` : ""))
  // Repeated deltas shown once.
  console.log(response.status, names.filter((name, i) => name !== names[i - 1]).join(", "))
  return parts
}

const user = { id: "m1", role: "user", parts: [{ type: "text", text: "Use get_weather then send_email" }] }
const first = await post([user])

// The page shows the calls; the user approves send_email (what addToolApprovalResponse does).
const request = first.find((part) => part.type === "tool-approval-request")!
const input = (id: string) => first.find((part) => part.type === "tool-input-available" && part.toolCallId === id)!
const weather = first.find((part) => part.toolName === "get_weather")!
const output = first.find((part) => part.type === "tool-output-available")!
const assistant = {
  id: "m2",
  role: "assistant",
  parts: [
    { type: "step-start" },
    { type: "tool-get_weather", toolCallId: weather.toolCallId, state: "output-available", input: weather.input, output: output.output },
    { type: "step-start" },
    {
      type: "tool-send_email",
      toolCallId: request.toolCallId,
      state: "approval-responded",
      input: input(request.toolCallId!).input,
      approval: { id: request.approvalId, approved: true }
    }
  ]
}
const second = await post([user, assistant])
console.log(second.filter((part) => part.type === "text-delta").map((part) => part.delta).join(""))
// The same approval again: nothing is pending any more.
await post([user, assistant])
await dispose()
