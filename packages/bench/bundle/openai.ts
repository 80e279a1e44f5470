// Bundle-size entry (src/bundle-size.ts): the same page as switchboard.ts,
// written with the official `openai` client.
import OpenAI from "openai"

const client = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: "unused", dangerouslyAllowBrowser: true })
const request = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "Hi" }] }

const completion = await client.chat.completions.create(request)
document.body.append(completion.choices[0]?.message.content ?? "")
const stream = await client.chat.completions.create({ ...request, stream: true })
for await (const chunk of stream) document.body.append(chunk.choices[0]?.delta.content ?? "")
