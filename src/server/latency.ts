// A decision event's latencyMs, to the microsecond: performance.now()'s difference carries 15–17
// significant digits (0.41234500000000004), a dozen bytes of every decision row (stored, copied to
// Parquet, read by analysis) for digits below any timer's resolution.

/** Milliseconds since `started` (a performance.now() reading), rounded to 0.001. */
export const latencyMsSince = (started: number): number => Math.round((performance.now() - started) * 1000) / 1000;
