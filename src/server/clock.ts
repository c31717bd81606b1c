// The app's only source of time, injected so tests can move it (key expiry, rotation grace,
// schedule windows, stale copies).
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
