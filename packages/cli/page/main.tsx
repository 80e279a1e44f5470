/**
 * The chat page of `switchboard serve`: the AI SDK's `useChat` against the
 * command's `/api/chat` (the UI message stream of `@switchboard/agent`'s
 * `UiServer`). Bundled with React by packages/cli/scripts/bundle.mjs; no CDN.
 */
import { useChat } from "@ai-sdk/react"
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai"
import { useState } from "react"
import { createRoot } from "react-dom/client"
import { starter } from "../src/ServeStarter.js"


type Part = UIMessage["parts"][number]
interface ToolView {
  readonly type: string
  readonly toolCallId: string
  readonly state: string
  readonly input?: unknown
  readonly output?: unknown
  readonly errorText?: string
  readonly approval?: { readonly id: string; readonly approved?: boolean }
}

const isTool = (part: Part): boolean => part.type.startsWith("tool-")

function Tool(props: { readonly part: ToolView; readonly decide: (id: string, approved: boolean) => void }) {
  const { part, decide } = props
  const name = part.type.slice("tool-".length)
  return (
    <div className="tool" data-tool={name} data-state={part.state}>
      <div>{`${name}(${JSON.stringify(part.input ?? {})})`}</div>
      {part.state === "output-available" && <div className="output">{`→ ${JSON.stringify(part.output)}`}</div>}
      {part.state === "output-error" && <div className="error">{`→ error: ${part.errorText ?? ""}`}</div>}
      {part.state === "output-denied" && <div>→ denied</div>}
      {part.state === "approval-requested" && part.approval !== undefined && (
        <div>
          Run this tool?{" "}
          <button data-action="approve" onClick={() => decide(part.approval!.id, true)}>Approve</button>{" "}
          <button data-action="deny" onClick={() => decide(part.approval!.id, false)}>Deny</button>
        </div>
      )}
    </div>
  )
}

function App() {
  const [input, setInput] = useState("")
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    transport: new DefaultChatTransport({ api: "/api/chat" }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses
  })
  const busy = status === "submitted" || status === "streaming"
  const send = (text: string) => {
    if (text.trim() === "" || busy) return
    void sendMessage({ text })
    setInput("")
  }
  const decide = (id: string, approved: boolean) => void addToolApprovalResponse({ id, approved })
  // The server ends every answer with `finish` (which sets the metadata) or
  // `error`: an answer with neither was cut on the way.
  const last = messages.at(-1)
  const cut = !busy && error === undefined && last?.role === "assistant" && last.metadata === undefined
  return (
    <main>
      <h1>Switchboard chat</h1>
      <p>
        An agent with two tools: <code>get_weather</code>, and <code>send_email</code>, which asks for your approval.
      </p>
      <button data-action="starter" disabled={busy} onClick={() => send(starter)}>Try: {starter}</button>
      {messages.map((message) => (
        <div key={message.id} className={`message ${message.role}`} data-role={message.role}>
          {message.parts.map((part, i) =>
            part.type === "text"
              ? <p key={i} className="text">{part.text}</p>
              : isTool(part)
              ? <Tool key={i} part={part as unknown as ToolView} decide={decide} />
              : null
          )}
        </div>
      ))}
      <p id="status" data-status={status}>{busy ? "…" : ""}</p>
      {error !== undefined && <p role="alert" className="error">Error: {error.message || "the answer failed"}</p>}
      {cut && <p role="alert" className="error">Error: the answer was cut off.</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault()
          send(input)
        }}
      >
        <input value={input} placeholder="Say something" onChange={(event) => setInput(event.target.value)} />
        <button type="submit" disabled={busy}>Send</button>
      </form>
    </main>
  )
}

createRoot(document.getElementById("root")!).render(<App />)
