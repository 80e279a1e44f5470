/**
 * Cold start, the official client: import it, make a client, one
 * `chat.completions.create`, exit. `node dist/cold/openai.js <port>`.
 */
import { fail, imported } from "./report.js"
import OpenAI from "openai"
import { apiKey, chatRequest } from "../lib/fixtures.js"

imported()
const client = new OpenAI({ apiKey, baseURL: `http://127.0.0.1:${process.argv[2]}/v1`, maxRetries: 0 })

client.chat.completions.create(chatRequest).then((completion) => {
  if (typeof completion.choices[0]?.message.content !== "string") fail("completion without content")
}, fail)
