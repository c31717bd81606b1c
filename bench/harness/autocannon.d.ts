// The part of autocannon 8's API the HTTP benchmark uses (the package ships no types, and
// @types/autocannon is not a dependency).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface RequestData {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  export interface RequestSpec extends RequestData {
    setupRequest?: (request: RequestData, context: Record<string, unknown>) => RequestData;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: RequestSpec[];
  }

  export interface Histogram {
    readonly average: number;
    readonly mean: number;
    readonly stddev: number;
    readonly min: number;
    readonly max: number;
    readonly total: number;
    readonly p50: number;
    readonly p99: number;
    readonly [percentile: string]: number;
  }

  export interface Result {
    readonly requests: Histogram;
    readonly latency: Histogram;
    readonly throughput: Histogram;
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly mismatches: number;
    readonly non2xx: number;
    readonly resets: number;
    readonly "2xx": number;
    readonly statusCodeStats: Readonly<Record<string, { count: number }>>;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
