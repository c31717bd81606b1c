// Estimates as dots on their 95% intervals, one row each, on one axis with zero marked: a lift
// whose interval stays clear of zero reads at a glance. The same figures are in the table beside
// it; the label carries them in words for screen readers.
import type { VNode } from "preact";
import { html } from "htm/preact";

export interface IntervalRow {
  readonly label: string;
  readonly estimate: number;
  /** [low, high], or null when there is no interval (too few units). */
  readonly interval: readonly [number, number] | null;
}

const WIDTH = 600;
const ROW = 28;
const LEFT = 130;

export function IntervalPlot(props: { rows: readonly IntervalRow[]; label: string; format: (n: number) => string }): VNode {
  const { rows, format } = props;
  const ends = rows.flatMap((r) => [r.estimate, ...(r.interval ?? [])]);
  const low = Math.min(0, ...ends);
  const high = Math.max(0, ...ends, low + 1e-9);
  const x = (v: number) => LEFT + ((v - low) / (high - low)) * (WIDTH - LEFT - 20);
  const words = rows.map((r) => `${r.label}: ${format(r.estimate)}${r.interval === null ? "" : ` (${format(r.interval[0])} to ${format(r.interval[1])})`}`).join("; ");
  const bottom = rows.length * ROW + 8;
  return html`<svg class="intervals" viewBox=${`0 0 ${WIDTH} ${bottom + 22}`} role="img" aria-label=${`${props.label}: ${words}`}>
    <line x1=${x(0)} x2=${x(0)} y1="4" y2=${bottom} class="zero" />
    ${rows.map((r, i) => {
      const y = i * ROW + 16;
      const [from, to] = r.interval ?? [r.estimate, r.estimate];
      return html`<g>
        <text x="0" y=${y + 4} class="label">${r.label}</text>
        <line x1=${x(from)} x2=${x(to)} y1=${y} y2=${y} class="ci" />
        <circle cx=${x(r.estimate)} cy=${y} r="5" class="point" />
      </g>`;
    })}
    <text x=${LEFT} y=${bottom + 16} class="axis">${format(low)}</text>
    <text x=${WIDTH - 20} y=${bottom + 16} class="axis" text-anchor="end">${format(high)}</text>
  </svg>`;
}
