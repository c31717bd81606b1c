// The console's live updates (GET /console/api/live): one SSE stream per open page, fed without
// a query or a timer per stream. A page about one bundle is subscribed to the change hub for its
// project and env, as OFREP's streams are (a new version is one pre-encoded message to every
// stream of the topic). Every page hears of the events this process stores: while any console
// stream is open, the store's commit feed is kept as counts per organization, project and type,
// and the newest events (references, nothing copied per event); every `flushMs` one message per
// viewer's scope (admin, an organization, a project) is encoded once and sent to all of that
// scope's streams. An idle console costs its socket and a place in a set. On a Worker (`perStream`)
// each stream keeps itself alive from its own timer instead and hears no stored events.
import type { EventType, SequencedEvent, StoredEvent } from "../../store/types.js";
import type { ChangeHub, ChangeSink } from "../changes/change-hub.js";
import type { Viewer } from "./viewer.js";
import { sees } from "./viewer.js";

/** How many of the newest events a page lists (the events page's tail). */
export const LAST_EVENTS = 20;

/** An event as the events page lists it: never its body, which is the sender's. */
export function eventRow({ seq, event }: SequencedEvent) {
  return { seq, type: event.type, ...(event.name !== undefined && { name: event.name }), projectId: event.projectId, env: event.env, unitKey: event.unitKey, receivedAt: event.receivedAt };
}

/** Where the commit feed comes from (EventStore.onCommitted). */
export interface CommitFeed {
  onCommitted(listener: (events: readonly SequencedEvent[]) => void): () => void;
}

export interface ConsoleLiveOptions {
  readonly events: CommitFeed;
  readonly hub: ChangeHub;
  /** How often stored events go out: a page's figures are at most this late. */
  readonly flushMs: number;
  /** A comment line this often keeps proxies from closing an idle stream. */
  readonly heartbeatMs: number;
  /**
   * Workers: a stream's bytes may come only from its own request (workerd cancels, as hung, a
   * stream fed by another request's timer once that request is gone), and no request hears of
   * stored events (the queue's consumer commits them, in another invocation). Each stream then
   * keeps itself alive from a timer of its own and opens with `event: unavailable` saying this.
   */
  readonly perStream?: { readonly eventsUnavailable: string };
}

interface Scope {
  readonly viewer: Viewer;
  readonly sinks: Set<ChangeSink>;
}

/** Events stored since the last flush, for one organization and project. */
interface Pending {
  readonly orgId: string;
  readonly projectId: string;
  readonly counts: Record<EventType, number>;
  readonly last: SequencedEvent[];
}

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(": keepalive\n\n");
const RETRY_MS = 2000;
const OPENING = encoder.encode(`retry: ${RETRY_MS}\n\n`);

export class ConsoleLive {
  private readonly scopes = new Map<string, Scope>();
  /** orgId → projectId → what arrived since the last flush. */
  private readonly pending = new Map<string, Map<string, Pending>>();
  private stopFeed: (() => void) | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private ticks = 0;

  constructor(private readonly options: ConsoleLiveOptions) {}

  /** Open streams, for tests and the benchmark. */
  get streams(): number {
    let count = 0;
    for (const scope of this.scopes.values()) count += scope.sinks.size;
    return count;
  }

  /** The stream of a page: stored events in the viewer's scope, and the topic's new bundle versions when one is named. */
  stream(viewer: Viewer, topic: { projectId: string; env: string; version: string } | undefined): Response {
    let close: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        controller.enqueue(OPENING);
        const sink: ChangeSink = { send: (chunk) => controller.enqueue(chunk), end: () => controller.close() };
        const leaveHub = topic === undefined ? undefined : this.options.hub.subscribe(topic, sink);
        const leave = this.options.perStream === undefined ? this.join(viewer, sink) : alone(sink, this.options.perStream.eventsUnavailable, this.options.heartbeatMs);
        close = () => {
          leaveHub?.();
          leave();
        };
      },
      cancel: () => close?.(),
    });
    // nginx and similar buffer responses unless told not to: updates must not wait in a proxy.
    return new Response(body, { headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" } });
  }

  /** Ends every stream (the server is shutting down): an open console does not hold the process. */
  close(): void {
    for (const scope of this.scopes.values()) for (const sink of scope.sinks) deliver(sink, undefined);
    this.scopes.clear();
    this.stop();
  }

  private join(viewer: Viewer, sink: ChangeSink): () => void {
    const id = `${viewer.orgId ?? ""}\u0000${viewer.projectId ?? ""}`;
    let scope = this.scopes.get(id);
    if (scope === undefined) {
      scope = { viewer, sinks: new Set() };
      this.scopes.set(id, scope);
    }
    scope.sinks.add(sink);
    this.start();
    const joined = scope;
    return () => {
      joined.sinks.delete(sink);
      if (joined.sinks.size === 0 && this.scopes.get(id) === joined) this.scopes.delete(id);
      if (this.scopes.size === 0) this.stop();
    };
  }

  private start(): void {
    if (this.timer !== undefined) return;
    this.stopFeed = this.options.events.onCommitted((events) => this.committed(events));
    this.timer = setInterval(() => this.flush(), this.options.flushMs);
    // Node: open streams alone do not keep a process alive that is shutting down.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopFeed?.();
    this.stopFeed = undefined;
    this.pending.clear();
  }

  private committed(events: readonly SequencedEvent[]): void {
    for (const sequenced of events) {
      const pending = this.pendingOf(sequenced.event);
      pending.counts[sequenced.event.type] += 1;
      pending.last.push(sequenced);
      if (pending.last.length > LAST_EVENTS) pending.last.shift();
    }
  }

  private pendingOf(event: StoredEvent): Pending {
    let projects = this.pending.get(event.orgId);
    if (projects === undefined) this.pending.set(event.orgId, (projects = new Map()));
    let pending = projects.get(event.projectId);
    if (pending === undefined) {
      pending = { orgId: event.orgId, projectId: event.projectId, counts: { exposure: 0, track: 0, decision: 0 }, last: [] };
      projects.set(event.projectId, pending);
    }
    return pending;
  }

  private flush(): void {
    this.ticks += 1;
    const beat = this.ticks % Math.max(1, Math.round(this.options.heartbeatMs / this.options.flushMs)) === 0;
    const all = [...this.pending.values()].flatMap((projects) => [...projects.values()]);
    this.pending.clear();
    for (const scope of this.scopes.values()) {
      const message = all.length === 0 ? undefined : eventsMessage(all.filter((p) => sees(scope.viewer, p)), this.options.flushMs);
      const chunk = message ?? (beat ? HEARTBEAT : undefined);
      if (chunk !== undefined) for (const sink of scope.sinks) deliver(sink, chunk);
    }
  }
}

/** `event: events` with what a scope's pages add: counts per type, the newest events, over how many seconds. */
function eventsMessage(seen: readonly Pending[], flushMs: number): Uint8Array | undefined {
  if (seen.length === 0) return undefined;
  const counts: Record<EventType, number> = { exposure: 0, track: 0, decision: 0 };
  for (const pending of seen) for (const type of Object.keys(counts) as EventType[]) counts[type] += pending.counts[type];
  const last = seen
    .flatMap((p) => p.last)
    .sort((a, b) => b.seq - a.seq)
    .slice(0, LAST_EVENTS)
    .map(eventRow);
  return encoder.encode(`event: events\ndata: ${JSON.stringify({ counts, last, seconds: flushMs / 1000 })}\n\n`);
}

/** A stream on a Worker: told once why no events come, and kept alive by a timer of its own request. */
function alone(sink: ChangeSink, eventsUnavailable: string, heartbeatMs: number): () => void {
  sink.send(encoder.encode(`event: unavailable\ndata: ${JSON.stringify({ events: eventsUnavailable })}\n\n`));
  const timer = setInterval(() => deliver(sink, HEARTBEAT), heartbeatMs);
  return () => clearInterval(timer);
}

/** A stream whose client left is dropped by its own cancel; this only keeps one failure from stopping the others. */
function deliver(sink: ChangeSink, chunk: Uint8Array | undefined): void {
  try {
    if (chunk === undefined) sink.end();
    else sink.send(chunk);
  } catch {
    // Closed under us: its cancel removes it.
  }
}
