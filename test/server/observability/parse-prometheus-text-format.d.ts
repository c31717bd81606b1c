// The part of parse-prometheus-text-format's API the metrics tests use (the package ships no types).
declare module "parse-prometheus-text-format" {
  export interface ParsedSample {
    readonly labels?: Record<string, string>;
    /** Counters, gauges, untyped. */
    readonly value?: string;
    /** Histograms: cumulative counts by upper bound. */
    readonly buckets?: Record<string, string>;
    readonly count?: string;
    readonly sum?: string;
  }
  export interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    readonly metrics: readonly ParsedSample[];
  }
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
