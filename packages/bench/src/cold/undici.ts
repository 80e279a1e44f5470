/**
 * Cold start, the floor: `undici.request` and `JSON.parse`, exit.
 * `node dist/cold/undici.js <port>`.
 */
import { fail, imported } from "./report.js"
import { request } from "undici"
import { apiKey, chatRequest } from "../lib/fixtures.js"

imported()

const once = async () => {
  const response = await request(`http://127.0.0.1:${process.argv[2]}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(chatRequest)
  })
  const completion = JSON.parse(await response.body.text()) as { choices: Array<{ message: { content?: unknown } }> }
  if (typeof completion.choices[0]?.message.content !== "string") fail("completion without content")
}
once().catch(fail)
