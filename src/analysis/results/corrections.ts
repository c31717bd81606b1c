// Adjusted p-values for many comparisons at once (arms × metrics), so that "some arm moved some
// metric" is not a near certainty with enough of them:
//   holm  Holm (1979), "A simple sequentially rejective multiple test procedure": controls the
//         family-wise error rate; p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j)).
//   bh    Benjamini & Hochberg (1995), "Controlling the false discovery rate": controls the
//         expected share of false discoveries; p̃_(i) = min_{j ≥ i} min(1, m p_(j) / j).
// p_(1) ≤ … ≤ p_(m) are the p-values in order; the adjusted values come back in the input's order.

export type Correction = "holm" | "bh" | "none";
export const CORRECTIONS: readonly Correction[] = ["holm", "bh", "none"];

export function adjustPValues(pValues: readonly number[], correction: Correction): number[] {
  const m = pValues.length;
  if (correction === "none") return [...pValues];
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p);
  const adjusted = new Array<number>(m);
  if (correction === "holm") {
    let running = 0;
    order.forEach(({ p, i }, rank) => {
      running = Math.max(running, Math.min(1, (m - rank) * p));
      adjusted[i] = running;
    });
  } else {
    let running = 1;
    for (let rank = m - 1; rank >= 0; rank--) {
      const { p, i } = order[rank]!;
      running = Math.min(running, (m * p) / (rank + 1));
      adjusted[i] = running;
    }
  }
  return adjusted;
}
