// Reading /metrics in the tests: the whole text parsed by a real exposition-format parser (its
// families, types and help), checked by `promtool check metrics` when Prometheus's promtool is
// installed (.ci/run installs it), and its sample lines read here for the values (that parser
// folds a labelled histogram's series into one, so it cannot tell routes apart).
import { spawnSync } from "node:child_process";
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Scrape {
  readonly text: string;
  readonly families: ParsedFamily[];
  readonly samples: readonly Sample[];
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function readSamples(text: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const match = SAMPLE_LINE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, raw] of (match[2] ?? "").matchAll(LABEL)) labels[name!] = JSON.parse(`"${raw}"`) as string;
    found.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return found;
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  const contentType = response.headers.get("Content-Type") ?? "";
  if (!contentType.startsWith("text/plain; version=0.0.4")) throw new Error(`GET ${url}: Content-Type ${contentType}`);
  return parsedScrape(await response.text());
}

/** Exposition text as read by the parser and by sample line. */
export function parsedScrape(text: string): Scrape {
  return { text, families: parsePrometheusTextFormat(text), samples: readSamples(text) };
}

export function family(scraped: Scrape, name: string): ParsedFamily {
  const found = scraped.families.find((f) => f.name === name);
  if (found === undefined) throw new Error(`no metric family ${name} in:\n${scraped.text}`);
  return found;
}

/** The samples named `name` (a histogram's are name_bucket, name_count, name_sum) whose labels include `labels`. */
export function samples(scraped: Scrape, name: string, labels: Record<string, string> = {}): Sample[] {
  return scraped.samples.filter((m) => m.name === name && Object.entries(labels).every(([k, v]) => m.labels[k] === v));
}

/** The one value of the sample with these labels (0 when there is none). */
export function value(scraped: Scrape, name: string, labels: Record<string, string> = {}): number {
  const found = samples(scraped, name, labels);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found.length === 0 ? 0 : found[0]!.value;
}

export const promtoolAvailable = spawnSync("promtool", ["--version"]).status === 0;

/** promtool's findings on the text: "" when it is clean. */
export function promtoolProblems(text: string): string {
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  return run.status === 0 ? "" : `${run.stdout}${run.stderr}`.trim() || `promtool exited ${run.status}`;
}
