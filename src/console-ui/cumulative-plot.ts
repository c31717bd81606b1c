// Units per allocation over time, cumulative by hour of first exposure: a split that drifts, or an
// allocation that stopped getting units, shows as lines that part. The units table beside it
// holds the totals; the label says them for screen readers.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { time } from "./format.js";
import { COLOURS, HEIGHT, PAD, WIDTH } from "./plot-frame.js";

export interface HourlyUnits {
  readonly hour: string;
  readonly allocationKey: string;
  readonly units: number;
}

export function CumulativePlot(props: { hourly: readonly HourlyUnits[]; allocations: readonly { allocationKey: string; allocationName: string }[] }): VNode | null {
  const hours = [...new Set(props.hourly.map((h) => h.hour))].sort();
  if (hours.length === 0) return null;
  const series = props.allocations.map((a) => {
    let total = 0;
    return hours.map((hour) => (total += props.hourly.filter((h) => h.hour === hour && h.allocationKey === a.allocationKey).reduce((sum, h) => sum + h.units, 0)));
  });
  const most = Math.max(1, ...series.map((s) => s[s.length - 1] ?? 0));
  const x = (i: number) => PAD.left + (hours.length === 1 ? 0 : (i / (hours.length - 1)) * (WIDTH - PAD.left - PAD.right));
  const y = (units: number) => HEIGHT - PAD.bottom - (units / most) * (HEIGHT - PAD.top - PAD.bottom);
  const words = props.allocations.map((a, i) => `${a.allocationName}: ${series[i]![series[i]!.length - 1]} units`).join("; ");
  const hourText = (hour: string) => time(`${hour}:00:00Z`);
  return html`<svg class="cumulative" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${`Cumulative units per allocation by hour, from ${hourText(hours[0]!)} to ${hourText(hours[hours.length - 1]!)}: ${words}`}>
    <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(0)} y2=${y(0)} class="axis-line" />
    <text x=${PAD.left - 6} y=${y(most) + 4} text-anchor="end" class="axis">${most}</text>
    <text x=${PAD.left - 6} y=${y(0) + 4} text-anchor="end" class="axis">0</text>
    <text x=${PAD.left} y=${HEIGHT - 6} class="axis">${hourText(hours[0]!)}</text>
    ${hours.length > 1 ? html`<text x=${WIDTH - PAD.right} y=${HEIGHT - 6} text-anchor="end" class="axis">${hourText(hours[hours.length - 1]!)}</text>` : null}
    ${series.map((s, i) =>
      s.length === 1
        ? html`<circle cx=${x(0)} cy=${y(s[0]!)} r="4" class=${`dot c${i % COLOURS}`} />`
        : html`<polyline points=${s.map((units, j) => `${x(j)},${y(units)}`).join(" ")} class=${`series s${i % COLOURS}`} />`,
    )}
  </svg>`;
}
