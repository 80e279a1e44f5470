/**
 * The ports of the tests that listen on a port of their choosing (Postgres,
 * cluster runners): one block per test file, blocks apart, so files that
 * vitest runs at once (`maxWorkers` in vitest.config.ts) never ask for the
 * same port. All lie outside the ephemeral range (32768–60999), which the
 * emulators and servers bound to port 0 draw from. A block's slot comes from
 * the test process's pid, so a leftover of an earlier run (a Postgres whose
 * stop failed) is unlikely to hold the port the next run wants.
 *
 * The CLI's tests (packages/cli/test/bin.test.ts) name their ports outright:
 * 24151–24159, 24990 and 24998 for workers, 25441 and 25443 for Postgres.
 * `Cluster.test.ts` takes 24999 and `ways-in.test.ts` 24987.
 */

const slot = (size: number): number => process.pid % size

/** Cluster runners of the workflow package's process tests: 20000–23999, offsets 0–2 and 5–6 processes, 3 corrupt, 7–9 submission. */
export const runner = (offset: number): number => 20000 + slot(400) * 10 + offset

/** Each test file's private Postgres. */
export const postgres = {
  sqlApprovalStore: () => 25000 + slot(400),
  processes: () => 26000 + slot(1000),
  submission: () => 27000 + slot(1000),
  corrupt: () => 28000 + slot(1000),
  sqlPacer: () => 29000 + slot(1000),
  journals: () => 30000 + slot(2000),
  join: () => 61000 + slot(1000),
  pacingProcesses: () => 65000 + slot(500)
} as const

/** The runners of the join test (`join.processes.test.ts`): 62000–64999. */
export const joinRunner = (offset: number): number => 62000 + slot(1000) * 3 + offset
