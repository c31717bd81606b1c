// `vane results` options: metrics, guardrails, windows and times, each checked and refused with
// the usage when malformed (exit 2).
import type { MetricSpec } from "../analysis/results/results.js";
import type { GuardrailDirection } from "../analysis/results/guardrail.js";
import type { RatioParts } from "../analysis/results/plan.js";
import type { MetricKind } from "../analysis/results/summary.js";
import { UsageError } from "./args.js";

const KINDS: readonly MetricKind[] = ["conversion", "value"];
const DIRECTIONS: readonly GuardrailDirection[] = ["increase", "decrease"];
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export interface MetricOptions {
  readonly metric: readonly string[];
  readonly guardrail: readonly string[];
  readonly window: readonly string[];
}

/** `--metric EVENT[:conversion|:value]`, `--guardrail EVENT[:kind]:increase|decrease`, `--window [EVENT=]DURATION`. */
export function metricSpecs(options: MetricOptions, usage: string): MetricSpec[] {
  const windows = windowsByEvent(options.window, usage);
  const specs: { event: string; kind: MetricKind | "ratio"; guardrail?: GuardrailDirection; ratio?: RatioParts }[] = options.metric.map((text) => metricOption(text, usage));
  for (const text of options.guardrail) {
    const cut = text.lastIndexOf(":");
    const direction = text.slice(cut + 1) as GuardrailDirection;
    if (cut <= 0 || !DIRECTIONS.includes(direction)) throw new UsageError(`--guardrail must be EVENT[:value]:increase|decrease, got "${text}"`, usage);
    const spec = kindSuffix(text.slice(0, cut), "--guardrail", usage);
    // A guardrail on a metric already asked for marks that metric rather than repeating it.
    const same = specs.find((s) => s.event === spec.event && s.kind === spec.kind && s.guardrail === undefined);
    if (same !== undefined) same.guardrail = direction;
    else specs.push({ ...spec, guardrail: direction });
  }
  for (const event of windows.keys()) {
    if (event !== "" && !specs.some((s) => s.event === event || s.ratio?.numerator.event === event || s.ratio?.denominator.event === event)) throw new UsageError(`--window names "${event}", which no --metric or --guardrail measures`, usage);
  }
  return specs.map((s) => {
    const windowMs = windows.get(s.ratio?.numerator.event ?? s.event) ?? windows.get("");
    return windowMs === undefined ? s : { ...s, windowMs };
  });
}

/** `EVENT[:value]`, or a ratio `EVENT[:value]/EVENT[:value]` (issue 30: a "/" makes a ratio). */
function metricOption(text: string, usage: string): { event: string; kind: MetricKind | "ratio"; ratio?: RatioParts } {
  const cut = text.indexOf("/");
  if (cut === -1) return kindSuffix(text, "--metric", usage);
  const [numerator, denominator] = [text.slice(0, cut), text.slice(cut + 1)];
  if (numerator === "" || denominator === "" || denominator.includes("/")) throw new UsageError(`--metric A/B needs two metrics EVENT[:value], got "${text}"`, usage);
  return { event: text, kind: "ratio", ratio: { numerator: kindSuffix(numerator, "--metric", usage), denominator: kindSuffix(denominator, "--metric", usage) } };
}

function kindSuffix(text: string, option: string, usage: string): { event: string; kind: MetricKind } {
  const cut = text.lastIndexOf(":");
  const suffix = text.slice(cut + 1) as MetricKind;
  const [event, kind] = cut >= 0 && KINDS.includes(suffix) ? [text.slice(0, cut), suffix] : [text, "conversion" as const];
  if (event === "") throw new UsageError(`${option} needs an event name, got "${text}"`, usage);
  return { event, kind };
}

/** "" → the default window; an event name → that event's metrics. */
function windowsByEvent(texts: readonly string[], usage: string): Map<string, number> {
  const windows = new Map<string, number>();
  for (const text of texts) {
    const cut = text.lastIndexOf("=");
    const event = cut === -1 ? "" : text.slice(0, cut);
    windows.set(event, duration(text.slice(cut + 1), usage));
  }
  return windows;
}

/** `90s`, `30m`, `12h`, `7d`, `1.5d`: a positive number and its unit; `what` names the option in the refusal. */
export function duration(text: string, usage: string, what = "--window must be [EVENT=]DURATION,"): number {
  const match = /^(\d+(?:\.\d+)?)([smhd])$/.exec(text);
  const ms = match === null ? Number.NaN : Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
  if (!(ms > 0)) throw new UsageError(`${what} a duration like 90s, 30m, 12h or 7d; got "${text}"`, usage);
  return ms;
}

/** The default pre-period: the metrics' common window when they all have one, else 14 days. */
export const DEFAULT_PREPERIOD_MS = 14 * UNIT_MS.d!;
export function preperiodOption(options: { "pre-period"?: string; cuped: boolean }, how: { metrics: readonly { windowMs?: number }[]; usage: string }): number | undefined {
  const text = options["pre-period"];
  if (text !== undefined) return duration(text, how.usage, "--pre-period must be");
  if (!options.cuped) return undefined;
  const windows = new Set(how.metrics.map((m) => m.windowMs));
  const [only] = [...windows];
  return windows.size === 1 && only !== undefined ? only : DEFAULT_PREPERIOD_MS;
}

/** An ISO 8601 date or date-time, in toISOString's form (what the store compares against). */
export function timeOption(text: string | undefined, option: string, usage: string): string | undefined {
  if (text === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) throw new UsageError(`${option} must be an ISO 8601 date or time, got "${text}"`, usage);
  return new Date(ms).toISOString();
}

/** `--cap Q`: a quantile in (0, 1] for winsorizing value metrics; undefined without the option. */
export function capOption(text: string | undefined, usage: string): number | undefined {
  if (text === undefined) return undefined;
  const q = /^(0(\.\d+)?|1(\.0*)?)$/.test(text) ? Number(text) : Number.NaN;
  if (!(q > 0 && q <= 1)) throw new UsageError(`--cap must be a quantile in (0, 1], like 0.99; got "${text}"`, usage);
  return q;
}

/** One of `choices`, else refused with the usage. */
export function choiceOption<T extends string>(text: string, option: string, how: { choices: readonly T[]; usage: string }): T {
  if (!how.choices.includes(text as T)) throw new UsageError(`${option} must be ${how.choices.join(", ")}; got "${text}"`, how.usage);
  return text as T;
}
