// A bandit's decisions per arm per UTC day, one line per arm (a dot when there is one day): an arm
// the policy stopped choosing, or one it moved to, shows as lines that part. The table beside it
// holds every figure; the label says the totals for screen readers.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { COLOURS, HEIGHT, PAD, WIDTH } from "./plot-frame.js";

export interface DailyDecisions {
  readonly day: string;
  readonly arm: string;
  readonly decisions: number;
}

/** The days with decisions, oldest first. */
export const daysOf = (daily: readonly DailyDecisions[]) => [...new Set(daily.map((d) => d.day))].sort();

export const decisionsOn = (daily: readonly DailyDecisions[], day: string, arm: string) => daily.find((d) => d.day === day && d.arm === arm)?.decisions ?? 0;

export function DailyDecisionsPlot(props: { daily: readonly DailyDecisions[]; arms: readonly string[] }): VNode | null {
  const days = daysOf(props.daily);
  if (days.length === 0) return null;
  const series = props.arms.map((arm) => days.map((day) => decisionsOn(props.daily, day, arm)));
  const most = Math.max(1, ...series.flat());
  const x = (i: number) => PAD.left + (days.length === 1 ? 0 : (i / (days.length - 1)) * (WIDTH - PAD.left - PAD.right));
  const y = (n: number) => HEIGHT - PAD.bottom - (n / most) * (HEIGHT - PAD.top - PAD.bottom);
  const words = props.arms.map((arm, i) => `${arm}: ${series[i]!.reduce((a, b) => a + b, 0)} decisions`).join("; ");
  return html`<svg class="cumulative daily" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${`Decisions per arm per day (UTC), from ${days[0]} to ${days[days.length - 1]}: ${words}`}>
    <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(0)} y2=${y(0)} class="axis-line" />
    <text x=${PAD.left - 6} y=${y(most) + 4} text-anchor="end" class="axis">${most}</text>
    <text x=${PAD.left - 6} y=${y(0) + 4} text-anchor="end" class="axis">0</text>
    <text x=${PAD.left} y=${HEIGHT - 6} class="axis">${days[0]}</text>
    ${days.length > 1 ? html`<text x=${WIDTH - PAD.right} y=${HEIGHT - 6} text-anchor="end" class="axis">${days[days.length - 1]}</text>` : null}
    ${series.map((s, i) =>
      s.length === 1
        ? html`<circle cx=${x(0)} cy=${y(s[0]!)} r="4" class=${`dot c${i % COLOURS}`} />`
        : html`<polyline points=${s.map((n, j) => `${x(j)},${y(n)}`).join(" ")} class=${`series s${i % COLOURS}`} />`,
    )}
  </svg>`;
}
