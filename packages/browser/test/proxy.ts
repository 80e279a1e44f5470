/**
 * The same-origin proxy of docs/browser.md, as the browser test runs it: the
 * page's own server forwards `/v1/*` to the service and adds the key, so the
 * page holds none. Bodies are piped both ways, so streams stay streams.
 */
import * as Http from "node:http"
import * as Https from "node:https"

export const forward = (upstream: URL, apiKey: string) => {
  const { request } = upstream.protocol === "https:" ? Https : Http
  return (req: Http.IncomingMessage, res: Http.ServerResponse): void => {
    // Check the user's session here: whoever reaches this route spends your key.
    const { authorization: _authorization, cookie: _cookie, host: _host, ...headers } = req.headers
    const out = request(new URL(req.url ?? "/", upstream), {
      method: req.method ?? "GET",
      headers: { ...headers, authorization: `Bearer ${apiKey}` }
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res) // a streamed chat stays a stream
    })
    out.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()))
    res.on("close", () => out.destroy()) // the page stopped reading: stop upstream too
    req.pipe(out)
  }
}
