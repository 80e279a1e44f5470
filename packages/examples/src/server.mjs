// server.mjs: serves the app and forwards /v1/* to Switchboard, adding the key.
import { readFile } from "node:fs/promises"
import http from "node:http"
import https from "node:https"

const upstream = new URL(process.env.SWITCHBOARD_BASE_URL) // the service's origin, e.g. https://api.example.com
const apiKey = process.env.SWITCHBOARD_API_KEY             // stays on the server
const { request } = upstream.protocol === "https:" ? https : http

const server = http.createServer(async (req, res) => {
  if (!req.url.startsWith("/v1/")) return res.end(await readFile("index.html")) // your app
  // Check the user's session here: whoever reaches this route spends your key.
  const { authorization, cookie, host, ...headers } = req.headers
  const out = request(new URL(req.url, upstream), { method: req.method, headers: { ...headers, authorization: `Bearer ${apiKey}` } }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers)
    answer.pipe(res) // a streamed chat stays a stream
  })
  out.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()))
  res.on("close", () => out.destroy()) // the page stopped reading: stop upstream too
  req.pipe(out)
})
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}`))
