// When an event happened, for analysis (issue 30): its `timestamp` is the sender's clock, which
// may be off by hours. A request that says when it was sent (top-level `sentAt`, on the same
// clock) lets the server correct it as Segment does: time = receivedAt − (sentAt − timestamp).
// Without `sentAt`, the timestamp as sent. Either way never later than receivedAt (an event
// cannot happen after it arrived) and never more than `maxAgeMs` before it (a device with a clock
// years off, or a queue replayed much later, cannot put an event before the experiment began).

/** The default bound on how long before its arrival an event can have happened. */
export const DEFAULT_MAX_EVENT_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export function eventTimeMs(timestampMs: number, receivedAtMs: number, sentAtMs: number | undefined, maxAgeMs: number): number {
  const corrected = sentAtMs === undefined ? timestampMs : receivedAtMs - (sentAtMs - timestampMs);
  return Math.min(receivedAtMs, Math.max(receivedAtMs - maxAgeMs, corrected));
}

/**
 * The analysis time of a stored event, in ms: the `eventTime` the server set at ingestion, or, for
 * an event stored without one (the server's own decision events, events from before it existed),
 * its timestamp clamped to its arrival in the same way.
 */
export function storedEventTimeMs(body: Readonly<Record<string, unknown>>, timestamp: string, receivedAtMs: number): number {
  const set = typeof body.eventTime === "string" ? Date.parse(body.eventTime) : Number.NaN;
  if (Number.isFinite(set)) return set;
  const sent = Date.parse(timestamp);
  return Number.isFinite(sent) ? eventTimeMs(sent, receivedAtMs, undefined, DEFAULT_MAX_EVENT_AGE_MS) : receivedAtMs;
}
