/**
 * Medians, ranges and the formatting of the tables.
 */

export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export interface Summary {
  readonly median: number
  readonly min: number
  readonly max: number
}

export const summarize = (values: ReadonlyArray<number>): Summary => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values)
})

const grouped = (value: number, digits: number) =>
  value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** 12,345 for large numbers, 12.3 / 1.23 for small ones. */
export const num = (value: number): string => {
  if (!Number.isFinite(value)) return "–"
  const abs = Math.abs(value)
  return grouped(value, abs >= 99.95 ? 0 : abs >= 9.995 ? 1 : 2)
}

export const range = (summary: Summary, format: (n: number) => string = num) =>
  `${format(summary.min)}–${format(summary.max)}`

export const mb = (bytes: number) => `${num(bytes / (1024 * 1024))} MB`
export const kb = (bytes: number) => `${num(bytes / 1024)} KB`
export const micros = (value: number) => `${num(value)} µs`
export const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)} ×` : "–")
export const cores = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(2)} cores`)

export interface Table {
  readonly header: ReadonlyArray<string>
  /** Right-aligned columns, by index. */
  readonly numeric?: ReadonlyArray<number>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

const escape = (cell: string) => cell.replace(/\|/g, "\\|")

export const markdownTable = (table: Table): string => {
  const align = table.header.map((_, i) => (table.numeric?.includes(i) ? "---:" : "---"))
  return [
    `| ${table.header.map(escape).join(" | ")} |`,
    `| ${align.join(" | ")} |`,
    ...table.rows.map((row) => `| ${row.map(escape).join(" | ")} |`)
  ].join("\n")
}

/** A fixed-width rendering for the terminal. */
export const textTable = (table: Table): string => {
  const widths = table.header.map((h, i) => Math.max(h.length, ...table.rows.map((row) => (row[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (table.numeric?.includes(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join("  ")
  return [line(table.header), widths.map((w) => "─".repeat(w)).join("  "), ...table.rows.map(line)].join("\n")
}
