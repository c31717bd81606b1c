// A policy's split as a bar over the layer's buckets: who gets which allocation. Buckets no
// allocation holds are drawn as gaps (those units get the parameters' defaults). The same split is
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

export function BucketBar(props: { allocations: readonly BarAllocation[]; bucketCount: number; weights?: readonly number[]; label: string }): VNode {
  const { allocations, bucketCount } = props;
  const share = (a: BarAllocation) => (a.bucketRange[1] - a.bucketRange[0] + 1) / bucketCount;
  const words = allocations.map((a) => `${a.name || a.key}: buckets ${a.bucketRange[0]}–${a.bucketRange[1]} (${percent(share(a))})`).join("; ");
  return html`
    <figure class="split">
      <div class="bar" role="img" aria-label=${`${props.label}: ${words || "no allocations"}`}>
        ${allocations.map(
          (a, i) => html`<span
            class=${`segment c${i % COLOURS}`}
            style=${{ left: `${(a.bucketRange[0] / bucketCount) * 100}%`, width: `${share(a) * 100}%` }}
            title=${`${a.name || a.key}: ${percent(share(a))}`}
          ></span>`,
        )}
      </div>
      <figcaption>
        <ul class="legend">
          ${allocations.map(
            (a, i) => html`<li>
              <span class=${`swatch c${i % COLOURS}`} aria-hidden="true"></span>
              <strong>${a.name || a.key}</strong> <code>${a.key}</code> · buckets ${a.bucketRange[0]}–${a.bucketRange[1]} ·
              <span class="share">${percent(share(a))}</span>${props.weights === undefined ? null : html` · weight <span class="weight">${props.weights[i]?.toFixed(3)}</span>`}
            </li>`,
          )}
        </ul>
      </figcaption>
    </figure>
  `;
}
