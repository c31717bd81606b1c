// A policy's split as a bar: who gets what. A static policy splits the layer's buckets: each
// allocation holds a range, and buckets none holds are drawn as gaps (those units get the
// parameters' defaults). An adaptive policy (a bandit) picks an arm per unit by its current
// weights (an equal split until it has learned): the bar shows the weights. The same split is
// listed in words beside it, so it reads without seeing the colours.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { percent } from "./format.js";

export interface BarAllocation {
  readonly key: string;
  readonly name: string;
  readonly bucketRange: readonly [number, number];
}

const COLOURS = 6;

interface Segment {
  readonly start: number;
  readonly share: number;
  readonly words: string;
}

function segments(props: { allocations: readonly BarAllocation[]; bucketCount: number; weights?: readonly number[]; adaptive: boolean }): Segment[] {
  const { allocations, bucketCount } = props;
  if (!props.adaptive) {
    return allocations.map((a) => {
      const share = (a.bucketRange[1] - a.bucketRange[0] + 1) / bucketCount;
      return { start: a.bucketRange[0] / bucketCount, share, words: `buckets ${a.bucketRange[0]}–${a.bucketRange[1]}` };
    });
  }
  const weights = props.weights ?? allocations.map(() => 1 / allocations.length);
  let start = 0;
  return allocations.map((_, i) => {
    const share = weights[i] ?? 0;
    const segment = { start, share, words: props.weights === undefined ? "equal split (nothing learned yet)" : "learned weight" };
    start += share;
    return segment;
  });
}

export function BucketBar(props: { allocations: readonly BarAllocation[]; bucketCount: number; weights?: readonly number[]; adaptive: boolean; label: string }): VNode {
  const parts = segments(props);
  const name = (a: BarAllocation) => a.name || a.key;
  const words = props.allocations.map((a, i) => `${name(a)}: ${parts[i]!.words} (${percent(parts[i]!.share)})`).join("; ");
  return html`
    <figure class="split">
      <div class="bar" role="img" aria-label=${`${props.label}: ${words || "no allocations"}`}>
        ${parts.map((s, i) => html`<span class=${`segment c${i % COLOURS}`} style=${{ left: `${s.start * 100}%`, width: `${s.share * 100}%` }}></span>`)}
      </div>
      <figcaption>
        <ul class="legend">
          ${props.allocations.map(
            (a, i) => html`<li>
              <span class=${`swatch c${i % COLOURS}`} aria-hidden="true"></span>
              <strong>${name(a)}</strong> <code>${a.key}</code>${" · "}${parts[i]!.words}${" · "}<span class="share">${percent(parts[i]!.share)}</span>
            </li>`,
          )}
        </ul>
      </figcaption>
    </figure>
  `;
}
