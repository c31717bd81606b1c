// A bandit's weights over time: one line per arm across the versions of the history (the
// learner's publications and the operators'), weight 0 to 1 against publication time, each held
// until the next version. The table
// beside it holds every figure; the label says the first and last for screen readers.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { time } from "./format.js";
import { COLOURS, HEIGHT, PAD, WIDTH } from "./plot-frame.js";

export interface WeightsPoint {
  readonly version: string;
  readonly storedAt: string;
  readonly by: string;
  readonly arms: readonly { readonly key: string; readonly weight: number }[];
}

const weightOf = (point: WeightsPoint, key: string) => point.arms.find((a) => a.key === key)?.weight ?? 0;

/** An arm's weight as served: each version's holds until the next one is published (a step, not a slope). */
function steps(points: readonly WeightsPoint[], times: readonly number[], key: string): [number, number][] {
  return points.flatMap((point, j) => {
    const weight = weightOf(point, key);
    return j === 0 ? [[times[0]!, weight] as [number, number]] : [[times[j]!, weightOf(points[j - 1]!, key)] as [number, number], [times[j]!, weight] as [number, number]];
  });
}

export function WeightsPlot(props: { points: readonly WeightsPoint[] }): VNode | null {
  const { points } = props;
  if (points.length === 0) return null;
  const keys = [...new Set(points.flatMap((p) => p.arms.map((a) => a.key)))];
  const times = points.map((p) => Date.parse(p.storedAt));
  const [first, last] = [times[0]!, times[times.length - 1]!];
  const x = (ms: number) => PAD.left + (last === first ? 0 : ((ms - first) / (last - first)) * (WIDTH - PAD.left - PAD.right));
  const y = (weight: number) => HEIGHT - PAD.bottom - weight * (HEIGHT - PAD.top - PAD.bottom);
  const words = keys.map((key) => `${key} ${weightOf(points[0]!, key).toFixed(2)} to ${weightOf(points[points.length - 1]!, key).toFixed(2)}`).join("; ");
  return html`<svg class="cumulative" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${`Weights per arm over ${points.length} versions, from ${time(points[0]!.storedAt)} to ${time(points[points.length - 1]!.storedAt)}: ${words}`}>
    <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(0)} y2=${y(0)} class="axis-line" />
    <text x=${PAD.left - 6} y=${y(1) + 4} text-anchor="end" class="axis">1</text>
    <text x=${PAD.left - 6} y=${y(0) + 4} text-anchor="end" class="axis">0</text>
    <text x=${PAD.left} y=${HEIGHT - 6} class="axis">${time(points[0]!.storedAt)}</text>
    ${points.length > 1 ? html`<text x=${WIDTH - PAD.right} y=${HEIGHT - 6} text-anchor="end" class="axis">${time(points[points.length - 1]!.storedAt)}</text>` : null}
    ${keys.map((key, i) =>
      points.length === 1
        ? html`<circle cx=${x(times[0]!)} cy=${y(weightOf(points[0]!, key))} r="4" class=${`dot c${i % COLOURS}`} />`
        : html`<polyline points=${steps(points, times, key).map(([ms, weight]) => `${x(ms)},${y(weight)}`).join(" ")} class=${`series s${i % COLOURS}`} />`,
    )}
  </svg>`;
}
