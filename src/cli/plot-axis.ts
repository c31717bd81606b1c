// The ticks of the results page's x axes: round values (1, 2 or 5 × a power of ten; whole UTC
// hours or days on a time axis), each label different from its neighbours', and every label
// inside the plot's width.

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** A time axis steps by one of these, the smallest that keeps at most MAX_TICKS ticks. */
const TIME_STEPS_MS = [1, 2, 3, 6, 12].map((h) => h * HOUR_MS).concat([1, 2, 7, 14, 28, 56, 112, 364].map((d) => d * DAY_MS));
const TARGET_TICKS = 5;
const MAX_TICKS = 7;
/** The width of one character of an 11 px system-ui label, rounded up, for keeping labels inside the plot. */
const LABEL_CHAR_PX = 7;

export interface Tick {
  readonly value: number;
  readonly label: string;
}

/** Ticks at multiples of a round step (1, 2 or 5 × 10^k) within [low, high], labelled with the step's decimals. */
export function numberTicks(low: number, high: number): Tick[] {
  const span = high - low;
  if (!(span > 0)) return [{ value: low, label: numberLabel(low, 0) }];
  const raw = span / TARGET_TICKS;
  const power = 10 ** Math.floor(Math.log10(raw));
  // The round step nearest the raw one on a log scale (as d3's ticks choose it).
  const error = raw / power;
  const step = power * (error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.sqrt(2) ? 2 : 1);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const ticks: Tick[] = [];
  for (let i = Math.ceil(low / step - 1e-9); i * step <= high + step * 1e-9; i++) {
    ticks.push({ value: i * step, label: numberLabel(i * step, decimals) });
  }
  return ticks;
}

function numberLabel(value: number, decimals: number): string {
  const text = value.toFixed(decimals);
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text; // no "-0.00" for a value rounded to zero
}

/**
 * Ticks on whole UTC hours (or days, for long windows) within [startMs, endMs]: "11-27 09:00" while
 * steps are hours, "11-27" once they are days.
 */
export function timeTicks(startMs: number, endMs: number): Tick[] {
  const step = TIME_STEPS_MS.find((s) => Math.floor(endMs / s) - Math.ceil(startMs / s) + 1 <= MAX_TICKS) ?? TIME_STEPS_MS.at(-1)!;
  const ticks: Tick[] = [];
  for (let t = Math.ceil(startMs / step) * step; t <= endMs; t += step) {
    const iso = new Date(t).toISOString();
    ticks.push({ value: t, label: step < DAY_MS ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(5, 10) });
  }
  return ticks;
}

/** An x axis's tick marks and labels as SVG, at `y`, each label kept within [0, width]. */
export function tickMarks(ticks: readonly Tick[], at: { x: (value: number) => number; y: number; width: number }): string {
  return ticks
    .map(({ value, label }) => {
      const x = at.x(value);
      const half = (label.length * LABEL_CHAR_PX) / 2;
      const anchor = x + half > at.width ? "end" : x - half < 0 ? "start" : "middle";
      return `<line x1="${x}" x2="${x}" y1="${at.y}" y2="${at.y + 4}" stroke="#333"/><text class="tick" x="${x}" y="${at.y + 16}" text-anchor="${anchor}">${label}</text>`;
    })
    .join("");
}
