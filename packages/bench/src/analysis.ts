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

**Response metadata costs a call 2–3 µs of client CPU** (this run's figure: "Per-call metadata overhead"). A
successful call without a hook makes no metadata; \`withResponse\` or an \`onResponse\` hook has \`Transport\` build it
(the headers redacted, the rate limits parsed) and run the hook. Measured in one process, rotated rounds, each against
the plain call of its round (2026-11-28, a machine shared with seven other builds), two runs of 61 rounds of 500
calls at loads of 38–42 and 40–43: \`withResponse\` +1.9 and +2.9 µs a call (1.05 and 1.07 × the plain call's 44.5 and
45.1 µs, medians of the per-round ratios), the hook +1.4 and +2.2 µs (1.03 and 1.04 ×); an earlier run of 15 rounds of
2,000 at a load of 44–56, +2.3 µs (1.04 ×) and −5.4 µs (0.93 ×). At those loads single rounds ranged from 0.4 to 2.7 ×
the plain call's, so only the medians say anything: a few per cent, which nothing was changed to save. The time to first byte of a JSON call (one closure and one clock read a call, on every call) is in
the non-streaming figure's Switchboard rows.
`

export const analysis: Readonly<Record<string, string>> = {
  "cold-start": `
**The target is below what \`effect\` itself costs.** The breakdown above: \`effect/Effect\`, \`effect/Schema\` and
\`effect/Stream\` alone took 140 ms of CPU (124 ms wall) in the last full run, after Node's own 23 ms, while openai's
whole process, its call included, took 118 ms (107 ms wall); a quick run at load 11 gave 113 against 116 ms. Node and
those three modules are about 1.4 × openai's wall time before a line of the SDK runs, so 1.5 × leaves about 10 ms for
core, the Node layer, undici (its \`Agent\` alone is 21–31 ms of CPU to load) and the call, which take about 150 ms
together. RSS is the same story: 91.5 MB after the three modules, against openai's 86.0 MB peak and a 103 MB target.

**Where it goes.** Module loading: 234 ES modules (\`effect\` 168, core 46, node 7) and 24 CommonJS ones (undici). A CPU
profile puts V8 compiling module source and Node resolving specifiers at about half of the process and the SDK's own
functions under 5 %. Nothing is compiled at import: Effect 4.1's parsers compile on their first call; what import does
is build \`Protocol\`'s schema values, 4–7 ms of CPU (re-importing \`Protocol.js\` and \`protocolEndpoints.js\` with their
dependencies loaded), about 2 % of the process. Bundled into one file the same program uses about openai's CPU (0.94 ×
in the first full run).

**Taken.** The Node layer no longer loads \`@effect/platform-node-shared\`'s file system at import (only a layer that
touches files does, when built): three modules fewer, a median 1–22 ms less CPU over three runs of alternated pairs.

**Tried.** Schemas built per capability on first use: at most those 4–7 ms, at the price of \`Protocol\`'s exports no
longer being schema values; not done. The built JavaScript without its comments (a third of core's and node's bytes):
the whole process did not move (median 346 against 347 ms of CPU, 12 alternated pairs, load 15). Node 22's compile
cache (\`NODE_COMPILE_CACHE\`, or \`module.enableCompileCache()\` in the application): importing \`effect/Effect\`,
\`Schema\`, \`Stream\`, \`@switchboard/core\` and \`@switchboard/node\` took 197–208 ms of CPU against 245–258 ms (five
alternated pairs, load 18), for 4 MB more RSS; it is the application's switch, not a library's (the CLI, an
application, sets it). Module imports gain nothing over the README's imports on Effect 4, which already import
\`effect/Effect\` rather than the \`effect\` index. Wall time follows the machine's load here: compare CPU.
`,
  "cli-start": `
**CPU is at the target; wall time is the load.** The launcher turns on Node's compile cache, so a command after the
first compiles less: \`switchboard models\` 142 ms of CPU against 168 ms with the cache off (the "no compile cache" row,
what the first run after an install pays; 9 interleaved rounds at load 16), \`--version\`, which sends nothing, 121 ms.
Before the cache the command used 174–203 ms of CPU in the port's runs, against 263–299 ms for the Effect 3 edition's
CLI. On a quiet machine wall time is close to CPU time; at loads of 8–16 on 2 cores it was 387–686 ms, time spent
waiting for a core. The command already runs as a bundle (the unbundled row shows what that saves).
`,
  "non-streaming": `
**Met, by client CPU.** The client is CPU-bound, so requests/s follows the inverse of its CPU per request. Before
this round's work it was 1.8–2.0 × raw undici's (65.7 / 62.7 against 32.9 µs a request, runPromise / forEach) and the
figure read 0.53–0.57 ×. Issue 38 took six leads off the call path, each measured against the build before it
(docs/decisions.md, "Non-streaming \`Chat.create\`, issue 38"): the span as the only service a call adds to the
context (\`withParentSpan\` also added a stack frame, and each addition rebuilds the fiber's cache), one copy of the
headers per call in \`NodeHttpWire\`, \`jsonProblem\`'s quick check, a flat call chain without the steps a call with
no hook or pacer does not need, and hand-written checks of a text request and of a completion in front of their
schemas (property-tested never to accept what the schema rejects; the schema has the last word). In two runs of the
figure after them (\`--only non-streaming\`, Node 22, load 2.3–3.1): 0.74–0.75 × and 0.79–0.82 × raw undici's
requests/s, 47.1–47.6 and 43.5–44.8 against 32.5–33.0 µs a request (1.43–1.47 × and 1.32–1.38 ×).

**What the rest of the gap is**: every guarantee, kept per call. The request's JSON check and validation, the reply's
\`Json.parse\` guard and check, the span with its GenAI attributes (each a \`Map.set\` on the native span, 15–20 a
call) and its \`traceparent\`, the duration and token histograms, the retry wrapper and the time limit's timer, and
Effect's fiber per \`runPromise\` (the forEach client, one fiber for all, is 3–4 µs cheaper). Over \`HttpClientWire\`
the same call costs 3–4 × the CPU: the own wire stays.

**The server was not the limit**: it is a \`node:cluster\` of two workers on one port (\`BENCH_SERVER_WORKERS\`),
its CPU summed over them and judged a core a worker; in those runs it was at most 0.90 and 0.92 cores over any timed
section.
`,
  rss: `
**Where the memory goes.** The imports alone take a Switchboard process to about 90 MB (Effect, \`Schema\`, \`Stream\`, the
SDK, undici: the cold-start breakdown), where raw undici's whole cold start peaks at about 74 MB; the rest is
old-generation growth between major collections at concurrency 32. The Effect 4 edition peaked 70 MB below the Effect 3
edition in the first full run (120 against 192 MB): Effect 4's \`Schema\` no longer loads \`fast-check\` (16 MB on
the 3 line).
`,
  streaming: `
**The figure measures a warm process now.** With 2 warm-up streams of 2,000 chunks, as the figure had until now, V8 was
still compiling the clients' code in the timed section, on threads of its own that the process's CPU counts and a
profile of the main thread does not show: 0.5 µs a chunk for the raw parser and 0.7 for Switchboard (read per thread
from \`/proc\`, 7 alternated rounds of the bench's client processes, load 3.6). That was most of the "0.4 µs a chunk in
\`Chat.stream\`'s path, with no frame of its own" that the round's bisection found above the raw parser in a Stream. The
figure now warms up 20 streams (docs/decisions.md); in those 7 rounds, client CPU per chunk with 2 and then 20 warm-up
streams: the raw parser 1.89 → 1.32 µs, Switchboard 2.33 → 1.53 with \`runForEach\` and 2.33 → 1.45 with \`runFold\`
(1.23 × → 1.16 × and 1.10 ×).

**Warm, the CPU target is at the edge, and the raw parser's own figure moves the most.** It cost 1.18 and 1.25 µs a
chunk in two runs of this figure (\`--only streaming\`, the final tree) at loads 7 and 2–3: Switchboard 1.56 and 1.54 µs
with \`runForEach\` (1.32 × and 1.23 ×; chunks/s 0.89 × and 0.85 ×), 1.49 and 1.50 with \`runFold\` (1.26 × and 1.20 ×;
0.91 × and 0.88 ×); 1.18 in 11 alternated rounds of its five rows at load 7–12 (Switchboard 1.34 × and 1.33 ×), 1.32 in
the 7 rounds at load 3.6 (1.16 × and 1.10 ×). Part of it is \`effect\`'s \`Stream\`: the raw parser in a Stream cost
1.08–1.19 × the raw parser with \`runForEach\` (its \`Effect\` per chunk, 65–75 ns) and 0.99–1.11 × with \`runFold\` in
those runs; Switchboard cost 0.11–0.26 µs a chunk above it. On this loopback the chunks/s ratio follows the CPU ratio
(the server is at most 0.2 cores).

**What stands in the way: Switchboard's own work above that floor, spread over four parts, each holding a guarantee.**
Built up stage by stage in one warm process (14 alternated rounds, load 6–7, \`runFold\` / \`runForEach\`;
docs/decisions.md): the raw parser's work over undici's body 1.15 / 1.20 µs a chunk, over \`NodeHttpWire\`'s 1.16 / 1.19
(the wire costs nothing more); the decoder +0.04–0.10 (\`eventsource-parser\`, which reads any valid event stream, the
\`__proto__\` guard and the check of every chunk); \`Transport\`'s pull and the stream's watch +0.05–0.08 (the first
element pulled inside the retries, the span and metrics kept until the stream ends); the span's facts and metrics
+0.035–0.04 (the facts' fold, finish reasons, usage and id per chunk, 13 ns of it; the rest the span and metrics, per
stream); the per-stream work (the request's check, the span, the retries' scope) 126 µs a stream, +0.025–0.05 a chunk at
5,000 chunks: 1.39 / 1.40 in all. Nothing runs per element outside the decoder's and the facts' loops, and no timer runs
per read. At the figure's raw parser (1.18–1.25 µs), 1.15 × is 1.36–1.44 µs against Switchboard's 1.49–1.57: 0.06–0.21
µs a chunk to take off, up to all of Switchboard's work above the floor with \`runFold\`, and more than it with
\`runForEach\`, whose floor alone is up to 1.19 ×. No single part is that large; what was tried without a guarantee
gained nothing measurable: one pull per socket read (\`NodeHttpWire\` wakes its reader at the first of the two pieces
undici hands per 64 KiB read: 40 pulls a stream against undici's 19 reads, per-round ratio 1.04 / 1.00 when halved), the
watch folded into \`Transport\`'s own pull (0.99 / 1.02), the SSE parser and the decoder in one stage.
`,
  "open-streams": `
**Memory per open stream** is the peak during the run less the RSS before it: in-flight data and garbage more than the
machinery. The Effect 4 edition holds about a third of what the Effect 3 edition held (98 against 279 KB in the first
full run); a miss is most likely the collector's timing: compare the min–max. In the full run of 2026-11-28 (quiet,
load under 4) the five rounds gave 82.6–187 KB a stream, bimodal; main before issue 38's work gave 211–219 KB in two
quick runs the same hour. With the young generation capped (\`NODE_OPTIONS=--max-semi-space-size=2\`, a quick run)
Switchboard held 60.9 KB a stream against the raw parser's 35.7 (1.71 ×) and both peaks fell by about 40 %: most of
what this figure counts is garbage not yet collected, and Switchboard makes more of it per chunk. Not a leak: the
1,000,000-chunk figure above stays within its bound. Here each read carries about 10 events, so what a stream costs
per read and per stream weighs more than in the streaming figure: \`Transport\`'s pull without \`Stream.toPull\`
(docs/decisions.md) took the CPU per chunk from 5.78 to 5.32 µs (6 alternated rounds of this figure's client, load
8–13; the raw parser 2.81), and in the same rounds Switchboard held 83.5 KB a stream (80.4–199) against main's 87.0
(76.8–97.0) and the raw parser's 74.9 (66.3–95.6): 1.11 × at the median, one round of six in the high mode; a quick
run of this figure on the final tree (load 4) gave 87.9 against 65.6 KB (1.34 ×). The target is met or missed by
which mode the collector lands in; narrowing it takes less made per stream and per read (the streaming figure's
per-stream setup is about 260 µs more than the raw parser's, here for 1,000 streams at once), not a guarantee.
`,
  "agent-serve": `
**What serving costs over the run: a fixed cost per request, and the frames.** Since the run writes its own frames
(\`UiStream.encodeAgent\` of the stream \`Agent.stream\` made runs the loop and writes each event as it comes, with no
queue between them; docs/decisions.md, "the frames written by the run"), the served path reads 1.07–1.11 ×
\`Agent.stream\` alone in this figure's runs (2.33–2.38 against 2.13–2.22 µs a part, load 1.4–2.2), where the build
before it read 1.19–1.22 × alternated with it. What is left over \`Agent.stream\` alone, at 2,000 parts an answer: the
frames (quoting each delta, the batch's string and its UTF-8, about 100 ns a part, 4–5 %), which now cost about what
the queue they replaced did (the "frames written" row, 0.96–0.98 ×); and a fixed cost of 220–270 µs a request whatever
its length (0.11–0.13 µs a part here, measured with one-part answers in one process: \`effect\`'s web handler and the
web \`Request\` and \`Response\` about 60 µs, the streamed body about 50, reading and decoding the page's body, the
approval store and the handler's steps about 100), none of it one large piece. A run of this figure that misses
1.2 × would have to find 0.2–0.25 µs a part more than these: compare builds in alternated rounds within one run, since
the ratio moves with the machine's load (a loaded client reads larger batches).
`,
  "agent-step": `
**A step is the chat call, five spans, three tool calls and the collector.** Issue 38 looked twice. The second look
found why a step cost about 105 µs over its chat call in the bench while the agent's own work, against a stub, was
50–55 µs (docs/decisions.md): the figure measured the step's compile (from a fresh process, CPU per step in blocks of
2,000 went 485 239 170 163 116 105 101 91 94 87 µs, a chat call's 320 153 108 88 55 58 56 53: units 4,001–10,000
caught the step still compiling, hence the warm-up of 16,000); the model call costs more inside the run (its metadata
hook for \`Step.response\`, 2.5 µs, and the run's and step's spans, whose services every lookup of the call walks);
and the collector (a step allocated 116 KB against a chat call's 48). The agent now adds only the span to the context
for each of its spans, runs its loop without generators, and reads a call's decode, its handler's answer and its
encode at once when they are already done: the agent's own work against a stub 40.2 → 16.7 µs a step, a step 84 KB.
The bench's step client, 4 alternated rounds (Node 22): after 4,000 warm-up 163 → 137 µs a step against a chat call of
82–86 µs (1.91 → 1.67 ×, load 9–11); after 16,000, 122 → 89 µs against 54–56 (2.18 → 1.64 ×, load 5–11). This
figure after the change (\`--only agent-step\`, load 6–8): 1.49 × (84.9 against 56.9 µs; the Effect 3 edition 3.66 ×,
327 against 89.5 µs); run again by the third look, with nothing changed since (load 6–8), 1.53 × (88.5 against
57.7 µs). **What stands in the way of 1.3 ×**, at the steady state in one process (10 alternated blocks of 4,000 after
16,000, load 7–9): a chat call 51.2 µs, a step 82.4 (1.61 ×), 31.2 µs over it where 1.3 × leaves 15.4. The model call
itself costs 8.1 µs more inside the run than alone: the \`onResponse\` hook that fills \`Step.response\` 1.9 µs (of
which building the reply's metadata is 0.2: the chat call alone builds none, having no hook and no pacer) and the run's
and the step's spans around it 6.0. Those spans are \`effect\`'s: \`Effect.useSpan\` is its cheapest public path (one
fiber read, one exit hook), its native span takes attributes one \`Map.set\` at a time with no record form, and the
parent span is a key of the fiber's context cache, so each span's context rebuilds that cache (eleven lookups); a
context's depth is not the cost (one to four extra services around a chat call, 1.1–2.0 µs, no trend). The other
23 µs are the agent's own work and its garbage: against a stub, 15 µs a step (the three \`execute_tool\` spans among
them; all five spans 5 µs), the rest the run's settings and transcript check, three argument decodes and result
encodes, the loop guard and a fiber per call, and a step allocates 84 KB against a chat call's 48 (about 2 KB of it the
decodes and encodes, 6 KB the spans and their contexts, the rest a few hundred bytes each across the loop). Meeting
1.3 × would take giving up the run's and step's spans or the step's metadata and still most of the decodes: the
guarantees cost more than the 15.4 µs together. Making the metadata lazy (getters filled on first read) cost more than
it saved (a step 84–85 → 88–90 µs, alternated), and running the calls one after the other gained nothing (122 against
121 µs), so several calls keep a fiber each.

**The chat call got cheaper since.** Issue 38's non-streaming work (docs/decisions.md) took about a quarter off
every \`Chat.create\`, the step's model call included: the full run at 08d672e measured the chat call alone at 36.8 µs
and a step at 65.3 µs, 1.77 ×. A step's cost over its chat call, 28.5 µs there, is the work counted above (31.2 µs in
the steady-state count); it did not grow, its denominator fell. Against a 36.8 µs call, 1.3 × leaves 11 µs for all of
it: less than the run's and the step's spans with the metadata hook (8 µs) and the three decodes and encodes
together.
`,
  "browser-bundle": `
**\`effect\` is two thirds of the page.** The chat entry is 67 % \`effect\` (runtime, \`Stream\`, \`Schema\`, its
tracer and metrics) and 29 % \`@switchboard/core\`; the floor row (\`effect\` alone with a \`Schema\` decode and a
\`Stream\`, no request) is already 28 KB of gzip, and the chat page adds Duration and Schedule (retries), Metric and the
tracer (a span and the GenAI metrics per call), and the schemas of a chat request, reply and chunk. Nothing of another
capability is left in it: the heaviest module of ours is \`Transport\` (10 KB minified). Issue 38 took out what
esbuild kept for a module-level call (\`Pacing.layer\`, the poller's default schedules, \`Telemetry\`'s exported
histograms: 1.0 KB of gzip off the chat page, 0.5 off the full one), and the video poll's merge of fibers (its
deadline and taps pulled in \`Queue\`: 2.1 KB off the full layer); the GenAI metrics themselves weigh 0.8 KB.
Giving up typed schema errors, the span per call and every validation would take about 5.5 KB more (measured in
issue 20), which still leaves the page over 45 KB: the targets sit below what \`effect\` and the guarantees weigh
(docs/decisions.md). **The package indexes** (\`import { Chat } from "@switchboard/core"\`) cost 19 KB more with
\`layerChat\` under esbuild, which keeps every export of a namespace an index re-exports (evanw/esbuild#1420, in
every index form tried): \`BrowserSwitchboard.layer\`'s capabilities (10.2 KB) and \`Chat.createObject\`'s JSON
Schema writer (8.7 KB) come along. \`effect\`'s own index does the same (its floor page: 28.2 KB by module path,
136 KB from \`"effect"\`). The Vite rows show Rollup shaking both forms to the same bytes, 3.7 KB under esbuild's
module-path page. The docs' page imports by module path (docs/browser.md).
`,
  "stream-memory": `
**Constant memory, not constant RSS.** The decoder holds one read's events at a time, and the Node wire holds at most
256 KiB of body for a slow reader; without forced collections the old generation grows between major collections, and
RSS plateaus.
`,
  "embed-many": `
**The batched path is per input, the other per request; the ratio is their quotient.** Warm, over 200,000 inputs,
a batched input costs about 1.1–1.6 µs of client CPU (raw undici with \`JSON.parse\`: 0.8) and a request of one
input 31–48 µs (raw: 21), above 20 × in CPU; a quarter of the batched cost is \`JSON.parse\` of the replies, an
eighth the collector. **Why it read 13.7 ×:** measured over 20,000 inputs after one warm-up run, the batched run
lasted about 80 ms after about 160 warm-up requests and cost 4.22 µs an input, mostly the JIT's work, hence the larger
batched run and its two warm-up runs. Re-measured so (issue 38, \`--only embed-many\`, Node 22, the two-worker
server): 28.0 × in inputs/s and 23.2 × in client CPU per input (1.68 against 39.1 µs) at load 6; at load 31–46,
12.3 × and 17.8 ×, the batched input at 2.2 µs. The inputs/s ratio also counts the
server's CPU and the scheduling of two processes on two cores, which a loaded machine moves most: the CPU ratio is the
path's. A cheaper request lowers it: the non-streaming work makes this ratio smaller, not larger (docs/decisions.md).
`
}
