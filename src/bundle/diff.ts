// What changed between two bundles, one line per changed value, each with its path in the form
// validation uses (`layers[0].policies[1].allocations[0].bucketRange`): `~` changed, `+` added,
// `-` removed. Arrays compare by index; a value's JSON is shown short.
import { at, isRecord } from "./validate-values.js";

const SHOWN_CHARS = 80;

export function diffBundles(before: unknown, after: unknown): string[] {
  const lines: string[] = [];
  walk(lines, { before, after, path: "" });
  return lines;
}

function walk(lines: string[], step: { before: unknown; after: unknown; path: string }): void {
  const { before, after, path } = step;
  if (isRecord(before) && isRecord(after)) {
    const keys = [...Object.keys(before), ...Object.keys(after).filter((k) => !Object.hasOwn(before, k))];
    for (const key of keys) child(lines, { before: before[key], after: after[key], path: at(path, key) });
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && !(isLeafArray(before) && isLeafArray(after))) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) child(lines, { before: before[i], after: after[i], path: at(path, i) });
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) lines.push(`~ ${label(path)}: ${short(before)} → ${short(after)}`);
}

function child(lines: string[], step: { before: unknown; after: unknown; path: string }): void {
  if (step.before === undefined) lines.push(`+ ${step.path}: ${short(step.after)}`);
  else if (step.after === undefined) lines.push(`- ${step.path}: ${short(step.before)}`);
  else walk(lines, step);
}

/** Short arrays of plain values (a bucketRange, weights) read best whole. */
function isLeafArray(a: unknown[]): boolean {
  return a.every((v) => v === null || typeof v !== "object");
}

function label(path: string): string {
  return path === "" ? "(root)" : path;
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS - 1)}…` : text;
}
