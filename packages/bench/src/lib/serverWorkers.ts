/**
 * How many processes answer on the loopback server's port
 * (`BENCH_SERVER_WORKERS`, default 2): read by the server and by the report,
 * which judges the server's CPU against them.
 */
export const serverWorkers = Math.max(1, Math.floor(Number(process.env["BENCH_SERVER_WORKERS"] ?? 2)) || 1)
