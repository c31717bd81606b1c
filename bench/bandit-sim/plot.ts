// Cumulative-regret plots as hand-written SVG: one line per algorithm (the mean over seeds) with
// a ±1 sd band, axes with round ticks, and a legend giving each final regret. Uniform random
// grows so much faster than the learners that it would flatten them; it is then drawn clipped
// and the legend says so.
import type { Summary } from "./summary.js";

const WIDTH = 760;
const HEIGHT = 460;
const LEFT = 70;
const RIGHT = 20;
const TOP = 40;
const BOTTOM = 50;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;
/** Uniform joins the scale only when it ends within this factor of the highest learner. */
const UNIFORM_IN_SCALE = 1.5;

interface Style {
  readonly color: string;
  readonly dash?: string;
}

const STYLES: Readonly<Record<string, Style>> = {
  thompson: { color: "#4e79a7" },
  ucb1: { color: "#f28e2b" },
  ucb1_scaled: { color: "#f28e2b", dash: "7 4" },
  epsilon_greedy: { color: "#59a14f" },
  linear_thompson: { color: "#e15759" },
  linucb: { color: "#b07aa1" },
  linear_thompson_scaled: { color: "#e15759", dash: "7 4" },
  linucb_scaled: { color: "#b07aa1", dash: "7 4" },
  uniform: { color: "#8c8c8c", dash: "2 4" },
};
const FALLBACK: Style = { color: "#333333" };

const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A step of 1, 2 or 5 × 10^k giving about `count` intervals over `range`. */
export function niceStep(range: number, count: number): number {
  const raw = range / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((m) => m * power >= raw)!;
  return step * power;
}

function formatTick(value: number): string {
  if (value >= 1000 && value % 1000 === 0) return `${value / 1000}k`;
  return Number.isInteger(value) ? String(value) : value.toPrecision(2);
}

export function regretPlot(title: string, summaries: readonly Summary[]): string {
  const rounds = summaries[0]!.rounds;
  const finalHigh = (s: Summary) => s.curve.mean[s.curve.mean.length - 1]! + s.curve.sd[s.curve.sd.length - 1]!;
  const learners = summaries.filter((s) => s.algorithm !== "uniform");
  const learnerMax = Math.max(...learners.map(finalHigh));
  const scaled = summaries.filter((s) => s.algorithm !== "uniform" || finalHigh(s) <= UNIFORM_IN_SCALE * learnerMax);
  const yStep = niceStep(Math.max(...scaled.map(finalHigh)), 5);
  const yMax = Math.ceil(Math.max(...scaled.map(finalHigh)) / yStep) * yStep;
  const xStep = niceStep(rounds, 5);
  const px = (t: number) => LEFT + (t / rounds) * PLOT_W;
  const py = (r: number) => TOP + PLOT_H - (r / yMax) * PLOT_H;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<defs><clipPath id="plot"><rect x="${LEFT}" y="${TOP}" width="${PLOT_W}" height="${PLOT_H}"/></clipPath></defs>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${escape(title)}</text>`,
  ];
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    parts.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${LEFT - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${formatTick(y)}</text>`);
  }
  for (let t = 0; t <= rounds; t += xStep) {
    parts.push(`<line x1="${px(t).toFixed(1)}" x2="${px(t).toFixed(1)}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H + 4}" stroke="#333"/>`);
    parts.push(`<text x="${px(t).toFixed(1)}" y="${TOP + PLOT_H + 18}" text-anchor="middle">${formatTick(t)}</text>`);
  }
  parts.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H}" stroke="#333"/>`);
  parts.push(`<line x1="${LEFT}" x2="${LEFT}" y1="${TOP}" y2="${TOP + PLOT_H}" stroke="#333"/>`);
  parts.push(`<text x="${LEFT + PLOT_W / 2}" y="${HEIGHT - 10}" text-anchor="middle">rounds</text>`);
  parts.push(`<text transform="translate(16 ${TOP + PLOT_H / 2}) rotate(-90)" text-anchor="middle">cumulative expected regret (mean ± sd over ${summaries[0]!.seeds} seeds)</text>`);

  parts.push(`<g clip-path="url(#plot)">`);
  for (const s of summaries) {
    const { mean, sd } = s.curve;
    const style = STYLES[s.algorithm] ?? FALLBACK;
    const t = (i: number) => px((i / (mean.length - 1)) * rounds).toFixed(1);
    const upper = Array.from(mean, (m, i) => `${t(i)},${py(m + sd[i]!).toFixed(1)}`);
    const lower = Array.from(mean, (m, i) => `${t(i)},${py(Math.max(0, m - sd[i]!)).toFixed(1)}`).reverse();
    parts.push(`<polygon points="${[...upper, ...lower].join(" ")}" fill="${style.color}" fill-opacity="0.12" stroke="none"/>`);
    const line = Array.from(mean, (m, i) => `${t(i)},${py(m).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${line}" fill="none" stroke="${style.color}" stroke-width="2"${style.dash ? ` stroke-dasharray="${style.dash}"` : ""}/>`);
  }
  parts.push(`</g>`);

  const legendX = LEFT + 14;
  const legendY = TOP + 12;
  parts.push(`<rect x="${legendX - 8}" y="${legendY - 10}" width="330" height="${summaries.length * 18 + 8}" fill="white" fill-opacity="0.85" stroke="#ccc"/>`);
  summaries.forEach((s, i) => {
    const style = STYLES[s.algorithm] ?? FALLBACK;
    const y = legendY + i * 18;
    const offScale = !scaled.includes(s) ? ", off the chart" : "";
    const label = `${s.label}: ${Math.round(s.finalRegret.mean).toLocaleString("en-US")} ± ${Math.round(s.finalRegret.sd).toLocaleString("en-US")}${offScale}`;
    parts.push(`<line x1="${legendX}" x2="${legendX + 26}" y1="${y}" y2="${y}" stroke="${style.color}" stroke-width="2"${style.dash ? ` stroke-dasharray="${style.dash}"` : ""}/>`);
    parts.push(`<text x="${legendX + 34}" y="${y + 4}">${escape(label)}</text>`);
  });
  parts.push(`</svg>`);
  return `${parts.join("\n")}\n`;
}
