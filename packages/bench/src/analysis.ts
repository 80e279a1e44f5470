/**
 * The prose of docs/performance.md that the bench cannot measure by itself:
 * `design`, what keeps the hot paths lean (printed always), and `analysis`,
 * what the profile and the experiments showed for a figure that missed a
 * target (printed only then). Numbers quoted here come from one-off runs on
 * the same machine (2026-11-25, Effect 4.1, Node 22.23, a 2-core machine at a
 * load average of 13–18 from other work: CPU per unit holds, wall time and
 * throughput do not); the tables above them are this run's.
 */
export const design = `
This is the Effect 4 edition (effect 4.1, Node 22). Every figure that has a Switchboard client also runs the Effect 3
edition (\`effect-3-last\`, effect 3.22) in the same run, so the two compare within one table. In the quick runs of the
port, at equal client CPU per non-streaming request (411 vs 417 µs and 342 vs 376 µs in two runs), the Effect 4 edition
peaked 20 MB lower in RSS (116 vs 138 MB), held about a third of the memory per open stream (94 vs 283 KB with
1,000 streams open), streamed at 20–25 % less CPU a chunk (20.4 vs 26.9 µs), ran an agent step at 1.26 × its chat
call's CPU against 2.28 ×, and bundled for the browser at 55.1 / 66.6 KB gzip against 93.9 / 101 KB.

**Speed tricks, re-measured on Effect 4** ("Speed tricks on Effect 4" below has this run's figures):

- **The own Node wire stays.** \`NodeHttpWire\` calls undici's \`Dispatcher.dispatch\` with one handler per call.
  Against \`HttpClientWire\` over \`@effect/platform-node\`'s \`NodeHttpClient.layerUndici\` it costs about half the
  client CPU per request (344 vs 638 µs: 1.85 ×, quick run at load 15), and a third of \`FetchHttpClient\`'s
  (1,116 µs: 3.24 ×).
- **The hand-written schema shortcuts stay**, each several times cheaper than the schema it stands in for:
  \`Protocol.Vector\` (a declared check of a 1,536-number embedding: 0.9 vs 27–42 µs against
  \`Schema.Array(Schema.Number)\`), \`isPlainEmbeddingResponse\` (7–8 vs 22 µs for 16 items), \`isNonEmptyStrings\`
  (0.1 vs 3 µs for 100 inputs), \`plainDecoder\`'s \`Schema.is\` shortcut (3.1–4.8 vs 8–13 µs a completion).
  Effect 4's compiled \`Schema.is\` is cheaper than Effect 3's (core measured \`isNonEmptyStrings\` 1.2 vs 122 µs on
  the 3 line), so the gains are smaller than they were, but they are still gains.
- **No gain, to be removed:** the encoder's \`is\` shortcut (\`internal/validate.ts\`: 2.75 vs 3.02 µs and
  3.78 vs 3.76 µs in two runs, within the noise: Effect 4's encode of a plain request is about as cheap as the check
  that skips it), and \`Object.assign\` instead of a spread for the GenAI span attributes (\`internal/genAi.ts\`,
  \`internal/observe.ts\`; 0.08–0.11 vs 0.06–0.10 µs: the spread is as fast or faster on Node 22's V8).
  \`internal/streams.ts\`'s \`unwrap\` and \`unwrapScoped\` are now aliases of \`Stream.unwrap\`: Effect 4's
  \`Stream.unwrap\` is the channel-level construction they were, so there is nothing left to measure, and the
  aliases can go.
- **Found on the way** (not changed here, core's code): the call's span is made with \`captureStackTrace: false\`,
  but \`internal/observe.ts\` then runs the call under \`Effect.withParentSpan(call, span)\` without options, and
  Effect 4 captures a stack trace there (\`addSpanStackTrace\`, 1.4 % of the non-streaming profile's busy time).
  \`useSpan\` + \`withParentSpan\` cost 6.7 µs as written and 1.9 µs with \`{ captureStackTrace: false }\` (medians
  of 9 alternated rounds of 20,000 in one process).
`

export const analysis: Readonly<Record<string, string>> = {
  "cold-start": `
**Where it goes.** The breakdown above: \`effect/Effect\`, \`effect/Schema\` and \`effect/Stream\` cost about as much
CPU as openai's whole process, and the SDK's own modules (\`@switchboard/core\`, \`@switchboard/node\`) about as much
again; the layer and one call add about 55 ms of CPU, most of it the first run of code (V8 compiling it). Bundled into
one file the same program costs about openai's CPU (0.95 × in the quick run): what the installed packages pay is
resolving, reading and compiling several hundred ES modules. Effect 4 cut it by about 40 % against the Effect 3
edition (CPU 329 vs 562 ms, peak RSS 92 vs 117 MB in the quick run), without reaching 1.5 ×.

**Tried.** Node 22's compile cache (\`NODE_COMPILE_CACHE\`, or \`module.enableCompileCache()\` in the application):
importing \`effect/Effect\`, \`Schema\`, \`Stream\`, \`@switchboard/core\` and \`@switchboard/node\` took 197–208 ms of CPU
against 245–258 ms (five alternated pairs), for 4 MB more RSS; it is the application's switch, not a library's.
The module-imports row is no cheaper than the README's imports on Effect 4, since the README already imports
\`effect/Effect\` rather than the \`effect\` index. Wall time here follows the machine's load: compare CPU.
`,
  "cli-start": `
**CPU is under the target, wall time is the load.** \`switchboard models\` used about 200 ms of CPU in the quick run
(\`--version\`, which sends nothing, 180 ms), against 299 ms for the Effect 3 edition's CLI; its wall time, 686 ms at a
load of 15 on 2 cores, is mostly waiting for a core. The command already runs as a bundle (the unbundled row shows
what that saves).
`,
  "non-streaming": `
**Client CPU per request is about 2.2–2.3 × raw undici's** (344–411 µs against 156–180 µs in the quick runs), and the
Effect 3 edition's is the same within the noise: the port neither gained nor lost here. At concurrency 32 with every
process competing for two loaded cores, requests/s follows CPU per request, so the ratio to raw undici sits at about
0.4–0.55 ×, below the 0.6 × target.

**What the profile shows** ("Profile of the non-streaming path"): Effect's runtime about a quarter of the busy time,
undici and \`writev\` about as much as in the raw client, \`@switchboard/core\` a tenth (\`Json.parse\`'s guard, the GenAI
attributes, the observation). Two leads for core, each a few µs a call: the stack trace captured by
\`withParentSpan\` (see "Found on the way": about 4.7 µs a call), and \`Metric\`'s \`makeKey\` (1.4 %), which runs on every
call. The wire is not where it goes: \`HttpClientWire\` over undici costs 1.85 × the own wire's CPU.
`,
  rss: `
**Where the memory goes.** The imports alone take a Switchboard process to about 90 MB (Effect, \`Schema\`, \`Stream\`,
the SDK, undici: the cold-start breakdown), where raw undici's whole cold start peaks at about 74 MB; the rest is old-generation growth between major collections at concurrency 32. The Effect 4
edition peaks about 20 MB below the Effect 3 edition in the same run (\`fast-check\` is no longer loaded by \`Schema\`).
`,
  streaming: `
**CPU per chunk is about 2.5 × the raw parser's** (20.4 vs 7.75 µs in the quick run at load 15; the Effect 3 edition
26.9 µs). The raw parser splits lines and calls \`JSON.parse\`; Switchboard also decodes each chunk (a hand check,
then the schema), runs it through \`Stream\`'s stages, and, with \`runForEach\`, runs one \`Effect\` per chunk, which
\`runFold\` does not. \`JSON.parse\` itself is the same in both. On the 3 line the gap was the same kind (0.57–0.66 × at a
load of 2.5): reaching 0.8 × would take the decoder out of \`Stream\` (a pull loop over the wire's reads), which
reverses how \`Transport\` owns streams and their retries.
`,
  "open-streams": `
**Memory per open stream** is the peak during the run less the RSS before it: in-flight data and garbage more than
the machinery. The Effect 4 edition holds about a third of what the Effect 3 edition held (94 vs 283 KB in the quick
run); a miss here is most likely the collector's timing on a loaded machine: compare the min–max.
`,
  "agent-step": `
**A step's cost** is the chat call plus the three tools' fibers (\`Effect.forEach\` with a concurrency forks a
coordinator and one fiber per call), their spans and their encodes. The Effect 4 edition's step measured 1.26 × its
chat call in the quick run, the Effect 3 edition's 2.28 ×: Effect 4's fibers and spans are cheaper. A miss is most
likely noise at this load: compare the min–max.
`,
  "browser-bundle": `
**\`effect\` is two thirds of the page.** The full layer's entry is 68 % \`effect\` (runtime, \`Stream\`, \`Schema\`, its
tracer and metrics) and 28 % \`@switchboard/core\`; the floor row (\`effect\` alone with a \`Schema\` decode and a
\`Stream\`, no request) is already 28 KB of gzip. Effect 4 took the chat entry from 93.9 to 55.1 KB and the full one
from 101 to 66.6 KB against the Effect 3 edition; the 45 and 55 KB targets would take about 10 KB more off each.
What \`@switchboard/browser\`'s owner measured and did not take is in docs/browser.md.
`,
  "stream-memory": `
**Constant memory, not constant RSS.** The decoder holds one read's events at a time, and the Node wire holds at most
256 KiB of body for a slow reader; without forced collections the old generation grows between major collections, and
RSS plateaus.
`,
  "embed-many": `
**The batched path is per request, not per input.** Both modes do the same per-input work (\`JSON.parse\` of the reply,
the hand checks); the ratio moves with the cost of one request, which the machine's load moves most.
`
}
