// The steady load of the PostgreSQL outage bench: an open loop (requests go out on schedule, whether
// or not earlier ones have answered, as independent clients would send them) of config GETs,
// resolves and event batches with ids, spread over the servers as a load balancer would. Every
// answer is recorded with its start time; event batches not acknowledged (503, lost connection,
// client timeout) are resent with the same ids a second later, as the contract asks of clients.
import { setTimeout as sleep } from "node:timers/promises";

export type Endpoint = "config" | "resolve" | "events";
export const ENDPOINTS: readonly Endpoint[] = ["config", "resolve", "events"];
/** "timeout": no answer within the client's timeout (a hung request); "network": the connection failed. */
export type Outcome = "200" | "304" | "503" | "timeout" | "network" | `other ${number}`;

export interface Sample {
  readonly endpoint: Endpoint;
  /** Milliseconds since the load started. */
  readonly startMs: number;
  readonly latencyMs: number;
  readonly outcome: Outcome;
  /** The answer carried X-Service-Bundle-Stale: true. */
  readonly stale: boolean;
}

export interface LoadOptions {
  readonly servers: readonly string[];
  readonly project: string;
  /** A server-side key: config, resolve and events. */
  readonly key: string;
  /** Requests per second by endpoint. */
  readonly rates: Readonly<Record<Endpoint, number>>;
  readonly eventsPerBatch: number;
  readonly clientTimeoutMs: number;
  /** How soon a batch not acknowledged is sent again. */
  readonly retryAfterMs: number;
}

const TICK_MS = 10;

export class OutageLoad {
  readonly samples: Sample[] = [];
  /** Every event id acknowledged (a 200 for its batch). */
  readonly acknowledged: string[] = [];
  readonly sent = new Set<string>();
  /** Batches sent again after an answer that was not a 200. */
  resends = 0;
  /** Events a 200 reported as duplicates: resends of batches that had been stored. */
  duplicates = 0;
  private readonly started = performance.now();
  private readonly retries: { ids: string[]; dueMs: number }[] = [];
  private readonly etags = new Map<string, string>();
  private inFlight = new Set<Promise<void>>();
  private next = 0;
  private batches = 0;
  private running = true;

  constructor(private readonly options: LoadOptions) {}

  now(): number {
    return performance.now() - this.started;
  }

  get pending(): number {
    return this.inFlight.size;
  }

  get unacknowledgedBatches(): number {
    return this.retries.length;
  }

  /** Sends on schedule until stop(); then resends what is not acknowledged, for at most `drainMs`. */
  async run(drainMs: number): Promise<void> {
    const owed: Record<Endpoint, number> = { config: 0, resolve: 0, events: 0 };
    let last = this.now();
    while (this.running) {
      await sleep(TICK_MS);
      const now = this.now();
      for (const endpoint of ENDPOINTS) {
        owed[endpoint] += ((now - last) / 1000) * this.options.rates[endpoint];
        for (; owed[endpoint] >= 1; owed[endpoint]--) this.launch(endpoint);
      }
      last = now;
      this.resendDue(now);
    }
    const until = this.now() + drainMs;
    while ((this.retries.length > 0 || this.inFlight.size > 0) && this.now() < until) {
      await sleep(TICK_MS);
      this.resendDue(this.now());
    }
    await Promise.all(this.inFlight);
  }

  stop(): void {
    this.running = false;
  }

  private resendDue(now: number): void {
    for (let i = this.retries.length - 1; i >= 0; i--) {
      const retry = this.retries[i]!;
      if (retry.dueMs > now) continue;
      this.retries.splice(i, 1);
      this.resends++;
      this.track(this.sendBatch(retry.ids));
    }
  }

  private launch(endpoint: Endpoint): void {
    if (endpoint === "events") {
      const batch = ++this.batches;
      const ids = Array.from({ length: this.options.eventsPerBatch }, (_, i) => `b${batch}-e${i}`);
      ids.forEach((id) => this.sent.add(id));
      this.track(this.sendBatch(ids));
    } else if (endpoint === "config") {
      this.track(this.sendConfig());
    } else {
      this.track(this.sendResolve());
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private server(): string {
    return this.options.servers[this.next++ % this.options.servers.length]!;
  }

  private async sendConfig(): Promise<void> {
    const server = this.server();
    const etag = this.etags.get(server);
    // Every other GET revalidates with the ETag last seen, as a browser SDK does.
    const headers: Record<string, string> = etag !== undefined && this.next % 4 < 2 ? { "If-None-Match": etag } : {};
    const response = await this.call("config", `${server}/v1/config/${this.options.project}`, { headers });
    const seen = response?.headers.get("ETag");
    if (seen) this.etags.set(server, seen);
  }

  private async sendResolve(): Promise<void> {
    const userId = `user-${Math.floor(Math.random() * 10_000)}`;
    await this.call("resolve", `${this.server()}/v1/resolve`, { body: { context: { userId, country: "US" } } });
  }

  private async sendBatch(ids: string[]): Promise<void> {
    const timestamp = new Date().toISOString();
    const events = ids.map((id) => ({ id, type: "track", event: "click", unitKey: id.split("-")[0]!, timestamp }));
    const response = await this.call("events", `${this.server()}/v1/events/batch`, { body: { events } });
    const answer = response?.status === 200 ? await (response.json() as Promise<{ duplicates: number }>).catch(() => undefined) : undefined;
    if (answer !== undefined) {
      this.duplicates += answer.duplicates;
      this.acknowledged.push(...ids);
    } else {
      this.retries.push({ ids, dueMs: this.now() + this.options.retryAfterMs });
    }
  }

  /** One request, recorded; the response (body unread) when one came, undefined otherwise. */
  private async call(endpoint: Endpoint, url: string, how: { headers?: Record<string, string>; body?: unknown }): Promise<Response | undefined> {
    const startMs = this.now();
    const record = (outcome: Outcome, stale = false) => this.samples.push({ endpoint, startMs, latencyMs: this.now() - startMs, outcome, stale });
    try {
      const response = await fetch(url, {
        method: how.body === undefined ? "GET" : "POST",
        headers: { Authorization: `Bearer ${this.options.key}`, "Content-Type": "application/json", ...how.headers },
        body: how.body === undefined ? undefined : JSON.stringify(how.body),
        signal: AbortSignal.timeout(this.options.clientTimeoutMs),
      });
      const status = response.status;
      const outcome: Outcome = status === 200 || status === 304 || status === 503 ? `${status}` : `other ${status}`;
      const stale = response.headers.get("X-Service-Bundle-Stale") === "true";
      if (endpoint !== "events" || status !== 200) await response.arrayBuffer();
      record(outcome, stale);
      return response;
    } catch (error) {
      record((error as Error).name === "TimeoutError" ? "timeout" : "network");
      return undefined;
    }
  }
}
