/**
 * The prose of docs/performance.md that the bench cannot measure by itself:
 * `design`, what keeps the hot paths lean (printed always), and `analysis`,
 * what the profile and the experiments showed for a figure that missed a
 * target (printed only then). Numbers quoted here come from the port's runs
 * on the same machine (2026-11-25, Effect 4.1, Node 22.23, 2 cores shared
 * with other work): a full `pnpm bench` at a load of 4–9 and quick runs at
 * 13–18. CPU per unit holds across them better than wall time or
 * throughput; the tables above them are this run's.
 */
export const design = `
This is the Effect 4 edition (effect 4.1, Node 22). Every figure with a Switchboard client also runs the Effect 3
edition (\`2ccd179\`, effect 3.22) in the same run, so the two compare within one table. In the port's full runs,
against the Effect 3 edition: client CPU per non-streaming request 0.79–0.85 × its CPU before core took the leads
below and 0.61–0.67 × after them (107 / 105 against 176 / 156 µs, runPromise / forEach, at 5a79f12), peak RSS
119–120 against 177–198 MB, CPU per streamed chunk 3.6–3.8 against 4.1–5.2 µs, 92–98 against 279 KB per open stream with
1,000 open, an agent step at 1.65–1.77 × its chat call's CPU against 2.31–2.33 ×, a cold start at 300–340 against
530–570 ms of CPU, and the browser's chat page at 54.7 against 93.9 KB of gzip.

**Speed tricks, re-measured on Effect 4** (this run's figures: "Speed tricks on Effect 4" below):

- **The own Node wire stays.** \`NodeHttpWire\` calls undici's \`Dispatcher.dispatch\` with one handler per call.
  \`HttpClientWire\` over \`@effect/platform-node\`'s \`NodeHttpClient.layerUndici\` cost 2.65–2.92 × its client CPU
  per non-streaming request in the full runs (1.85 × in a quick run at load 15), over \`FetchHttpClient\` 4.87–5.14 ×,
  with about twice the peak RSS. For streams the wires are even (1.00–1.01 × over undici, 1.11–1.14 × over fetch, per
  chunk): a long stream's cost is in decoding, not in the exchange. The non-streaming call decides it.
- **The hand-written schema shortcuts stay**, each several times cheaper than the schema it stands in for (medians of
  9 alternated rounds): \`Protocol.Vector\`, a declared check of an embedding (0.9 against 26 µs for
  \`Schema.Array(Schema.Number)\` of 1,536 numbers), \`isPlainEmbeddingResponse\` (7 against 22 µs for 16 items),
  \`isNonEmptyStrings\` (0.1 against 3 µs for 100 inputs), \`plainDecoder\`'s \`Schema.is\` shortcut (3.2 against 7.8 µs a
  completion). Effect 4's compiled checks are much cheaper than Effect 3's (core measured \`isNonEmptyStrings\`'s
  schema at 122 µs on the 3 line), so the gains are smaller than they were, but they remain.
- **Without a speed gain:** the encoder's \`is\` shortcut (\`internal/validate.ts\`: 2.48 against 2.46 µs in one run, 3.39
  against 2.50 in another: Effect 4 encodes a plain request about as fast as it checks one). Core keeps it for what it
  does: it sends a request's unknown fields on, which Effect 4's encoding drops. \`Object.assign\` instead of a spread
  for the GenAI span attributes (\`internal/genAi.ts\`, \`internal/observe.ts\`): the spread is as fast or faster on
  Node 22 (0.06 against 0.08 µs), but core's move to the spread doubled the memory an open stream holds (the open-streams figure: 199 against 99 KB a stream, 2.66 × against 1.30 × the raw parser's), so \`Object.assign\` stays for memory. \`internal/streams.ts\`'s \`unwrap\`
  and \`unwrapScoped\` were aliases of \`Stream.unwrap\` on Effect 4 (its \`Stream.unwrap\` is the channel-level
  construction they were), nothing to gain: core removed them (0c9d7ce).
- **Found by this bench's profile, taken by core** (5a79f12, \`docs/decisions.md\`, "Measured speed-ups"): a call's span
  was made with \`captureStackTrace: false\`, but \`internal/observe.ts\` ran the call under \`Effect.withParentSpan(call,
  span)\`, where Effect 4 captures a stack trace unless told (\`addSpanStackTrace\`, the second-heaviest frame of the
  non-streaming profile: 4.6 % of the busy time). Alone, \`useSpan\` + \`withParentSpan\` cost 6.7 µs as written and
  1.9 µs with \`{ captureStackTrace: false }\` (medians of 9 alternated rounds of 20,000 in one process); end to end, in a
  scratch copy of core's build with that one option against an unchanged copy (alternated processes, two runs of 5
  and 7 rounds at a load of 3–8), client CPU per request 122.8 → 116.1 and 128.7 → 113.9 µs (runPromise), 122.4 → 106.2
  and 119.0 → 107.9 µs (forEach). Next was \`Metric\`'s \`makeKey\` (2 %: a histogram update sorted and stringified its
  attributes to find its series); core now makes its histograms per label set.
`

export const analysis: Readonly<Record<string, string>> = {
  "cold-start": `
**Where it goes.** The breakdown above: \`effect/Effect\`, \`effect/Schema\` and \`effect/Stream\` cost about as much CPU as
openai's whole process, and the SDK's own modules about as much again; the layer and one call add about 55 ms, most
of it the first run of code (V8 compiling it). Bundled into one file the same program uses about openai's CPU (0.94 ×
in the first full run): what the installed packages pay is resolving, reading and compiling several hundred ES
modules. Effect 4 cut it by about 40 % against the Effect 3 edition (305 against 528 ms of CPU, 92 against 117 MB),
without reaching the target.

**Tried.** Node 22's compile cache (\`NODE_COMPILE_CACHE\`, or \`module.enableCompileCache()\` in the application):
importing \`effect/Effect\`, \`Schema\`, \`Stream\`, \`@switchboard/core\` and \`@switchboard/node\` took 197–208 ms of CPU
against 245–258 ms (five alternated pairs, load 18), for 4 MB more RSS; it is the application's switch, not a
library's. Module imports gain nothing over the README's imports on Effect 4, which already import \`effect/Effect\`
rather than the \`effect\` index. Wall time follows the machine's load here: compare CPU.
`,
  "cli-start": `
**CPU is under the target; wall time is the load.** \`switchboard models\` used 174–203 ms of CPU in every run of the
port (\`--version\`, which sends nothing, 150–180 ms), against 263–299 ms for the Effect 3 edition's CLI. Its wall time
was 186 ms in a full run that passed, and 387 and 686 ms at loads of 8 and 15 on 2 cores: time spent waiting for a
core. The command already runs as a bundle (the unbundled row shows what that saves).
`,
  "non-streaming": `
**Client CPU per request is about 2.0–2.3 × raw undici's** in every run (107 against 53 µs at 5a79f12, after core's
speed-ups; 120 against 52 µs before them), and requests/s follows it once the cores are busy: the ratio to raw undici
moved between 0.34 and 1.21 × across the port's runs, around the 0.6 × target.

**What the profile shows** ("Profile of the non-streaming path"): \`writev\` and undici about as much as in the raw
client, Effect about a quarter of the busy time (its fiber runtime, the schema checks, the span's attributes),
\`@switchboard/core\` about a tenth (\`Json.parse\`'s guard, the GenAI attributes, the observation). The leads the profile
gave (the stack trace of \`withParentSpan\`, \`Metric\`'s key per update) are taken; see "What keeps it lean". The wire
is not where it goes: over \`HttpClientWire\` the same call costs 2.65–2.92 × the CPU.
`,
  rss: `
**Where the memory goes.** The imports alone take a Switchboard process to about 90 MB (Effect, \`Schema\`, \`Stream\`, the
SDK, undici: the cold-start breakdown), where raw undici's whole cold start peaks at about 74 MB; the rest is
old-generation growth between major collections at concurrency 32. The Effect 4 edition peaked 70 MB below the Effect 3
edition in the first full run (120 against 192 MB): Effect 4's \`Schema\` no longer loads \`fast-check\` (16 MB on
the 3 line).
`,
  streaming: `
**CPU per chunk is about 1.3 × the raw parser's** (3.6 against 2.7 µs in the first full run; the Effect 3 edition 4.1–5.1
µs): the verdict is on chunks/s, which the first full run put at 0.72 / 0.78 × (runForEach / runFold), just under the
target. The raw parser splits lines and calls \`JSON.parse\`; Switchboard also checks each chunk (a hand check, then
the schema), runs it through \`Stream\`'s stages and the span's facts, and with \`runForEach\` runs one \`Effect\` per chunk,
which \`runFold\` does not. The wire is not the difference: \`HttpClientWire\` over undici streams at the same CPU per chunk.
Closing the rest would take the decoder out of \`Stream\` (a pull loop over the wire's reads), which reverses how
\`Transport\` owns streams and their retries.
`,
  "open-streams": `
**Memory per open stream** is the peak during the run less the RSS before it: in-flight data and garbage more than the
machinery. The Effect 4 edition holds about a third of what the Effect 3 edition held (98 against 279 KB in the first
full run); a miss is most likely the collector's timing on a loaded machine: compare the min–max.
`,
  "agent-serve": `
**Where the rest goes.** Mapping and encoding (\`UiStream\`, no \`Response\`) cost 1.06–1.17 × \`Agent.stream\` in the
port's runs: a part object, its JSON and the chunk's string and bytes; the handler and the web body add the request's
decoding, the \`Response\` and one read per batch. The body, the context and the queue size are already taken (see the
note above and docs/decisions.md). What is left to try: a served path that writes frames from the events without part
objects (under 1 % measured for \`text-delta\`), and fewer stream stages a chunk. The ratio moves with the machine's
load (1.13 × at load 85, 1.30 × at load 12 for the same build before the queue size): compare within one run.
`,
  "agent-step": `
**A step is the chat call plus the tools' fibers and spans.** With three tools, \`Effect.forEach\` with a concurrency
forks a coordinator and one fiber per call, and each call has its span, its encode and its handler's \`provide\`. The
Effect 4 edition's step measured 1.74 × its chat call's CPU in the first full run and 1.26 × in a quick run, the Effect
3 edition's 2.33 × and 2.28 ×: Effect 4's fibers and spans are cheaper, and the target is at the edge of what a step
with three concurrent tools costs. Core's speed-ups made the chat call cheaper too, so the ratio moved less than the
step's CPU (1.65 × at 5a79f12; core's own alternated runs 1.56 × and 1.64 ×).
`,
  "browser-bundle": `
**\`effect\` is two thirds of the page.** The chat entry is 67 % \`effect\` (runtime, \`Stream\`, \`Schema\`, its
tracer and metrics) and 29 % \`@switchboard/core\`; the floor row (\`effect\` alone with a \`Schema\` decode and a
\`Stream\`, no request) is already 28 KB of gzip, and the chat page adds Duration and Schedule (retries), Metric and the
tracer (a span and the GenAI metrics per call), and the schemas of a chat request, reply and chunk. Nothing of another
capability is left in it: the heaviest module of ours is \`Transport\` (10 KB minified). The 45 and 55 KB targets
would take about 13 and 15 KB of gzip more off, that is, most of what the SDK adds to \`effect\`'s floor. **The
package indexes** (\`import { Chat } from "@switchboard/core"\`) cost 21 KB more with \`layerChat\`: esbuild keeps
every export of a namespace that an index re-exports (evanw/esbuild#1420), so \`Chat.createObject\`'s JSON Schema
and \`BrowserSwitchboard.layer\`'s capabilities come along; Vite's production build (Rollup) shakes both forms to
the same bytes. The docs' page imports by module path (docs/browser.md).
`,
  "stream-memory": `
**Constant memory, not constant RSS.** The decoder holds one read's events at a time, and the Node wire holds at most
256 KiB of body for a slow reader; without forced collections the old generation grows between major collections, and
RSS plateaus.
`,
  "embed-many": `
**The batched path is per input, the other per request; the ratio is their quotient.** Warm, over 200,000 inputs,
a batched input costs about 1.1–1.6 µs of client CPU (raw undici with \`JSON.parse\`: 0.8) and a request of one
input 31–40 µs (raw: 21), above 20 × in CPU; a quarter of the batched cost is \`JSON.parse\` of the replies, an
eighth the collector. Measured over 20,000 inputs after one warm-up run, the batched run lasted about 80 ms after
about 160 warm-up requests, mostly JIT warm-up (3.2–3.7 µs an input), hence the larger batched run and its two
warm-up runs. The inputs/s ratio also counts the server's CPU, and a cheaper request lowers it: the non-streaming
work makes this ratio smaller, not larger (docs/decisions.md).
`
}
