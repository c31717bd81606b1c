// Change notifications for open event streams (OFREP's eventStreams, ADR-0008; Vane's SDK): each
// stream subscribes to a project and env; while any is open, the hub asks the bundle cache to
// recheck those versions every `watchMs`, and the cache's change detection tells it of a new
// version (an import, newly published weights), which goes out to every stream of that topic as
// one pre-encoded SSE message. One timer for all streams, no per-stream timer: an idle stream
// costs its socket and its queue, nothing more. A comment line every `heartbeatMs` keeps proxies
// from closing idle streams. In a Worker (`perStream`) each stream has its own timer instead,
// and writes only from it: a request's bytes may come only from its own timers and reads, and
// workerd cancels, as hung, a stream fed by another request's timer once that request is gone.
import type { BundleCache, BundleChange } from "../bundle-cache.js";
import type { Clock } from "../clock.js";

/** Where a stream's bytes go: its ReadableStream's controller. */
export interface ChangeSink {
  send(chunk: Uint8Array): void;
  /** Ends the stream (the server is shutting down); EventSource reconnects elsewhere. */
  end(): void;
}

export interface ChangeHubOptions {
  readonly bundles: BundleCache;
  readonly clock: Clock;
  /** How often watched versions are rechecked: a change reaches streams within about this. */
  readonly watchMs: number;
  readonly heartbeatMs: number;
  /** A timer per stream, each checking its bundle through the cache (at most every refresh) and writing to its stream alone: Workers. */
  readonly perStream?: boolean;
}

interface Topic {
  readonly projectId: string;
  readonly env: string;
  version: string;
  readonly sinks: Set<ChangeSink>;
}

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(": keepalive\n\n");

/** The SSE message for a version: `id` is the version, so a reconnecting EventSource says what it saw (Last-Event-ID). */
export function changeMessage(version: string, nowMs: number): Uint8Array {
  const data = JSON.stringify({ type: "refetchEvaluation", etag: `"${version}"`, lastModified: Math.floor(nowMs / 1000) });
  return encoder.encode(`id: ${version.replace(/[\r\n]/g, "")}\nevent: message\ndata: ${data}\n\n`);
}

export class ChangeHub {
  private readonly topics = new Map<string, Topic>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private ticks = 0;
  private readonly stopListening: () => void;

  constructor(private readonly options: ChangeHubOptions) {
    this.stopListening = options.bundles.onChange((change) => this.changed(change));
  }

  /** Open streams, for tests and the benchmark. */
  get streams(): number {
    let count = 0;
    for (const topic of this.topics.values()) count += topic.sinks.size;
    return count;
  }

  /**
   * Adds a stream for a project and env whose current version is `version`; when the client
   * last saw another one (`lastSeen`), it is told at once. The returned function removes it.
   */
  subscribe(where: { projectId: string; env: string; version: string; lastSeen?: string | undefined }, sink: ChangeSink): () => void {
    const id = `${where.projectId}\u0000${where.env}`;
    let topic = this.topics.get(id);
    if (topic === undefined) {
      topic = { projectId: where.projectId, env: where.env, version: where.version, sinks: new Set() };
      this.topics.set(id, topic);
    }
    topic.sinks.add(sink);
    if (where.lastSeen !== undefined && where.lastSeen !== topic.version) this.deliver(sink, changeMessage(topic.version, this.options.clock.now()));
    const stopWatch = this.options.perStream === true ? this.watchAlone(topic, sink) : undefined;
    if (stopWatch === undefined) this.startTimer();
    const current = topic;
    return () => {
      stopWatch?.();
      current.sinks.delete(sink);
      if (current.sinks.size === 0 && this.topics.get(id) === current) this.topics.delete(id);
      if (this.topics.size === 0) this.stopTimer();
    };
  }

  /** A stream's own watch (perStream): what the cache holds is compared with what this stream was told, and told here. */
  private watchAlone(topic: Topic, sink: ChangeSink): () => void {
    let told = topic.version;
    let ticks = 0;
    const beatEvery = Math.max(1, Math.round(this.options.heartbeatMs / this.options.watchMs));
    const timer = setInterval(async () => {
      ticks += 1;
      // A failed check changes nothing: the stream stays open and the next tick asks again.
      await Promise.resolve(this.options.bundles.lookup(topic.projectId, topic.env)).catch(() => undefined);
      if (topic.version !== told) {
        told = topic.version;
        this.deliver(sink, changeMessage(told, this.options.clock.now()));
      }
      if (ticks % beatEvery === 0) this.deliver(sink, HEARTBEAT);
    }, this.options.watchMs);
    return () => clearInterval(timer);
  }

  /** Ends every open stream and stops watching: a server shutting down is not held open by its listeners. */
  close(): void {
    this.stopTimer();
    this.stopListening();
    for (const topic of this.topics.values()) for (const sink of topic.sinks) this.deliver(sink, undefined);
    this.topics.clear();
  }

  private changed(change: BundleChange): void {
    const topic = this.topics.get(`${change.projectId}\u0000${change.env}`);
    const version = change.entry.bundle.version;
    if (topic === undefined || topic.version === version) return;
    topic.version = version;
    if (this.options.perStream === true) return; // each stream's own watch tells it
    const message = changeMessage(version, this.options.clock.now());
    for (const sink of topic.sinks) this.deliver(sink, message);
  }

  private tick(): void {
    this.ticks += 1;
    const beat = this.ticks % Math.max(1, Math.round(this.options.heartbeatMs / this.options.watchMs)) === 0;
    for (const topic of this.topics.values()) {
      // A failed check changes nothing here: the streams stay open and the next tick asks again.
      void this.options.bundles.recheck(topic.projectId, topic.env).catch(() => undefined);
      if (beat) for (const sink of topic.sinks) this.deliver(sink, HEARTBEAT);
    }
  }

  /** A stream that cannot take bytes any more (its client left) is dropped by its own cancel; this only keeps one failure from stopping the others. */
  private deliver(sink: ChangeSink, chunk: Uint8Array | undefined): void {
    try {
      if (chunk === undefined) sink.end();
      else sink.send(chunk);
    } catch {
      // Closed under us: its cancel unsubscribes it.
    }
  }

  private startTimer(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.tick(), this.options.watchMs);
    // Node: open streams alone do not keep a process alive that is shutting down.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
