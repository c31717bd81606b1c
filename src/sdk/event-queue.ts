// Events on their way to POST /v1/events/batch: sent when `flushAt` are waiting or
// `flushIntervalMs` after the first one, one request at a time. An event leaves the queue only
// when the service has answered for it: a 503 or 429 stored nothing, so the same events go again
// after Retry-After (and nothing else is sent before then); a 200 is final, pipelineErrors or
// not (a resend would duplicate the batch); other refusals are reported and dropped, since
// resending cannot change them. Every event gets an `id` when queued, so a batch resent after a
// network failure whose answer was lost is stored once (the service remembers ids for a window).
import { uuidv7 } from "../ids/uuidv7.js";
import { EventsRefused } from "./events-refused.js";
import { type Service, authorization, endpoint, failure } from "./http.js";

/** The contract's limit per request. */
const MAX_BATCH_EVENTS = 1000;
/** Browsers refuse keepalive bodies past 64 KiB (all in flight together); a margin for headers. */
const KEEPALIVE_BYTES = 60 * 1024;
/** Held while the service is away; past this the oldest go, so a long outage cannot eat the heap. */
const MAX_QUEUED_EVENTS = 10_000;
/** Unreachable service: 1 s, doubling, at most a minute. */
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

export type OutgoingEvent = Record<string, unknown>;

export interface EventQueueOptions {
  readonly service: Service;
  readonly flushAt: number;
  readonly flushIntervalMs: number;
  /** Events the service refused one by one (validationErrors): final, never resent. */
  readonly onRefused: (refused: EventsRefused) => void;
  readonly onError: (error: unknown) => void;
  /** Workers: keeps the isolate alive for each flush the queue starts. */
  readonly waitUntil: ((promise: Promise<unknown>) => void) | undefined;
  /** The clock the events' timestamps come from: each batch says when it was sent on it (`sentAt`). */
  readonly now: () => number;
}

/** A timer and the promise handed to waitUntil for it, settled when it fires or is cancelled. */
interface Pending {
  readonly timer: ReturnType<typeof setTimeout>;
  readonly settle: () => void;
}

interface BatchAnswer {
  validationErrors?: { index: number; error: string }[];
}

export class EventQueue {
  private waiting: OutgoingEvent[] = [];
  /** The send loop runs (one request at a time), and the promise that ends with it. */
  private busy = false;
  private current: Promise<void> = Promise.resolve();
  /** How many of the waiting events a flush asked to send, beyond what flushAt sends anyway. */
  private mustSend = 0;
  private pending: Pending | undefined;
  private backingOff = false;
  /** Date.now() when backing off ends. */
  private retryAt = 0;
  private failures = 0;

  constructor(private readonly options: EventQueueOptions) {}

  add(event: OutgoingEvent): void {
    event.id ??= uuidv7(Date.now());
    this.waiting.push(event);
    if (this.waiting.length > MAX_QUEUED_EVENTS) {
      const dropped = this.waiting.splice(0, this.waiting.length - MAX_QUEUED_EVENTS).length;
      this.options.onError(new Error(`event queue full: dropped the ${dropped} oldest event(s)`));
    }
    if (this.backingOff) return; // the retry sends it
    if (this.waiting.length >= this.options.flushAt) {
      if (!this.busy) this.background(this.run());
    } else if (this.pending === undefined) this.later(this.options.flushIntervalMs);
  }

  /** Sends everything waiting, unless the service asked to wait (the retry timer sends it then). */
  flush(): Promise<void> {
    if (this.backingOff) return Promise.resolve();
    this.mustSend = this.waiting.length;
    return this.busy ? this.current : this.run();
  }

  /**
   * The last chance (close): whatever waits is sent once, after the rest of a Retry-After the
   * service gave (a timer that keeps a Node process up for it); what is refused then is reported.
   */
  async flushFinal(): Promise<void> {
    await this.current;
    this.cancelTimer();
    if (this.backingOff) await new Promise((resolve) => setTimeout(resolve, this.retryAt - Date.now()));
    this.backingOff = false;
    const events = this.waiting.splice(0);
    for (let i = 0; i < events.length; i += MAX_BATCH_EVENTS) {
      const batch = events.slice(i, i + MAX_BATCH_EVENTS);
      if ((await this.send(batch, false)) !== undefined) this.options.onError(new Error(`${batch.length} event(s) not sent before close`));
    }
  }

  /**
   * The page is going away: what waits leaves now with fetch keepalive (at most 64 KiB survive
   * the page; anything past that goes as an ordinary request, best effort). The answers are still
   * read, so if the page stays (hidden, then shown again) a 503 puts the events back.
   */
  flushOnExit(): void {
    this.cancelTimer();
    const events = this.waiting.splice(0);
    let budget = KEEPALIVE_BYTES;
    for (const chunk of chunksBySize(events)) {
      const keepalive = chunk.bytes <= budget;
      if (keepalive) budget -= chunk.bytes;
      this.background(this.sendAndRequeue(chunk.events, keepalive));
    }
  }

  private run(): Promise<void> {
    this.cancelTimer();
    return (this.current = this.drain());
  }

  /** Sends while a flush asked for more or flushAt events wait; events arriving meanwhile wait for their own trigger. */
  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.waiting.length > 0 && !this.backingOff && (this.mustSend > 0 || this.waiting.length >= this.options.flushAt)) {
        const batch = this.waiting.splice(0, MAX_BATCH_EVENTS);
        this.mustSend = Math.max(0, this.mustSend - batch.length);
        await this.sendAndRequeue(batch, false);
      }
    } finally {
      this.busy = false;
    }
  }

  private async sendAndRequeue(batch: OutgoingEvent[], keepalive: boolean): Promise<void> {
    const retryMs = await this.send(batch, keepalive);
    if (retryMs === undefined) return;
    this.waiting.unshift(...batch);
    this.backingOff = true;
    this.retryAt = Date.now() + retryMs;
    this.cancelTimer();
    this.later(retryMs, () => (this.backingOff = false));
  }

  /** Posts one batch; the ms to wait before sending it again, or undefined when it is done with. */
  private async send(batch: OutgoingEvent[], keepalive: boolean): Promise<number | undefined> {
    const { service, onError, onRefused } = this.options;
    let response: Response;
    try {
      response = await service.fetch(endpoint(service, "/v1/events/batch"), {
        method: "POST",
        headers: { ...authorization(service), "Content-Type": "application/json" },
        // sentAt: this clock now, so the server can correct the events' timestamps for its skew.
        body: JSON.stringify({ sentAt: new Date(this.options.now()).toISOString(), events: batch }),
        keepalive,
      });
    } catch (error) {
      // Unreachable, or the answer was lost on the way back: the resend carries the same event
      // ids, so whatever did arrive is not stored twice.
      onError(error);
      return Math.min(FIRST_BACKOFF_MS * 2 ** this.failures++, MAX_BACKOFF_MS);
    }
    if (response.ok) {
      this.failures = 0;
      const answer = (await response.json().catch(() => ({}))) as BatchAnswer;
      const errors = answer.validationErrors;
      if (errors?.length) onRefused(new EventsRefused(errors, batch));
      return undefined;
    }
    const error = await failure(response);
    onError(error);
    // Only these two promise that nothing was stored, so only they are safe to resend.
    if (response.status === 503 || response.status === 429) return error.retryAfterMs ?? FIRST_BACKOFF_MS;
    return undefined;
  }

  private later(delayMs: number, before?: () => void): void {
    let settle!: () => void;
    const fired = new Promise<void>((resolve) => (settle = resolve));
    const timer = setTimeout(() => {
      this.pending = undefined;
      before?.();
      void this.flush().then(settle, settle);
    }, delayMs);
    (timer as { unref?: () => void }).unref?.();
    this.pending = { timer, settle };
    this.options.waitUntil?.(fired);
  }

  private cancelTimer(): void {
    if (this.pending === undefined) return;
    clearTimeout(this.pending.timer);
    this.pending.settle();
    this.pending = undefined;
  }

  private background(work: Promise<void>): void {
    const guarded = work.catch(this.options.onError);
    this.options.waitUntil?.(guarded);
  }
}

interface Chunk {
  readonly events: OutgoingEvent[];
  readonly bytes: number;
}

/** Consecutive events in bodies of at most KEEPALIVE_BYTES (an event larger than that goes alone). */
function chunksBySize(events: readonly OutgoingEvent[]): Chunk[] {
  const encoder = new TextEncoder();
  const chunks: Chunk[] = [];
  let current: OutgoingEvent[] = [];
  let bytes = "{\"events\":[]}".length;
  for (const event of events) {
    const size = encoder.encode(JSON.stringify(event)).length + 1;
    if (current.length > 0 && (bytes + size > KEEPALIVE_BYTES || current.length === MAX_BATCH_EVENTS)) {
      chunks.push({ events: current, bytes });
      current = [];
      bytes = "{\"events\":[]}".length;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) chunks.push({ events: current, bytes });
  return chunks;
}
