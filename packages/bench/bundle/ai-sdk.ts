// Bundle-size entry (src/bundle-size.ts): the same page as switchboard.ts,
// written with the AI SDK (`ai`) and its OpenAI-compatible provider.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { generateText, streamText } from "ai"

const provider = createOpenAICompatible({ name: "switchboard", baseURL: `${location.origin}/v1` })
const model = provider.chatModel("gpt-4o-mini")

const { text } = await generateText({ model, prompt: "Hi" })
document.body.append(text)
const result = streamText({ model, prompt: "Hi" })
for await (const delta of result.textStream) document.body.append(delta)
