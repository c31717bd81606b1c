// Where the verbs write, and how they lay text out. Every verb writes through an Io, so tests run
// `main(argv, io)` in-process and read what a user would see.

export interface Io {
  /** A line (or lines) for stdout: results. */
  out(text: string): void;
  /** A line (or lines) for stderr: problems, notes that must not pollute piped output. */
  err(text: string): void;
}

export const consoleIo: Io = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

export { shortTime } from "../server/admin/key-operations.js";

/** `1 bundle`, `2 bundles`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A refusal with every problem, one per line, each with its path. */
export function problemList(heading: string, problems: readonly { path: string; message: string }[]): string {
  return [`${heading} (${plural(problems.length, "problem")}):`, ...problems.map((p) => `  ${p.path}: ${p.message}`)].join("\n");
}
