import { Chat, Embeddings } from "@switchboard/core"
import { NodeSwitchboard } from "@switchboard/node"

// One runtime for the whole program: its services and connection pool are
// built on the first call and shared by every call after it.
const switchboard = NodeSwitchboard.runtime({
  baseUrl: process.env["SWITCHBOARD_BASE_URL"]!,
  apiKey: process.env["SWITCHBOARD_API_KEY"]!
})

const ask = (content: string) =>
  switchboard.runPromise(Chat.create({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }))

const [first, second] = await Promise.all([ask("One"), ask("Two")])
console.log(first.choices[0]?.message.content)
console.log(second.choices[0]?.message.content)
const vectors = await switchboard.runPromise(Embeddings.embedMany(["a", "b"], { model: "text-embedding-3-small" }))
console.log(`${vectors.length} vectors`)

// Closes the connections; the runtime cannot be used after.
await switchboard.dispose()
