// The CI guard on bench:instructions: each row's instructions per request against the figure
// committed in bench/results/instructions-guard.json, failing only past the tolerance (a count,
// not a time, so a loaded machine does not make it flake). Rows without a committed figure pass
// and are listed, so a new row asks for its figure instead of failing.
import { readFileSync } from "node:fs";

/** How much a row may grow over its committed figure before the guard fails. */
export const GUARD_TOLERANCE = 0.25;

export interface GuardFigures {
  readonly warmup: number;
  readonly requests: number;
  /** Row key → instructions per request (all threads, idle subtracted). */
  readonly rows: Readonly<Record<string, number>>;
}

export interface GuardVerdict {
  readonly key: string;
  readonly committed: number | undefined;
  readonly measured: number;
  /** measured ÷ committed − 1, when there is a committed figure. */
  readonly growth: number | undefined;
  readonly ok: boolean;
}

export function judge(committed: GuardFigures, measured: Readonly<Record<string, number>>, tolerance = GUARD_TOLERANCE): GuardVerdict[] {
  return Object.entries(measured).map(([key, value]) => {
    const figure = committed.rows[key];
    if (figure === undefined) return { key, committed: undefined, measured: value, growth: undefined, ok: true };
    const growth = value / figure - 1;
    return { key, committed: figure, measured: value, growth, ok: growth <= tolerance };
  });
}

export function readGuardFigures(file: URL): GuardFigures {
  return JSON.parse(readFileSync(file, "utf8")) as GuardFigures;
}

export function verdictLines(verdicts: readonly GuardVerdict[], tolerance = GUARD_TOLERANCE): string[] {
  const k = (x: number) => `${Math.round(x / 1000)} k`;
  return verdicts.map((v) =>
    v.committed === undefined
      ? `  ${v.key}: ${k(v.measured)} (no committed figure: record one with --record-guard)`
      : `  ${v.ok ? "ok  " : "FAIL"} ${v.key}: ${k(v.measured)} against ${k(v.committed)} committed (${v.growth! >= 0 ? "+" : ""}${Math.round(v.growth! * 100)} %, at most +${Math.round(tolerance * 100)} %)`,
  );
}
