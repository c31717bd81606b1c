// Gives back an isolate's young generation once a load is over: the event loop's (server/node.ts)
// and each store thread's (thread-entry.ts); it sits in store, which the server may import. Under
// load V8 grows the new space to its maximum (the event loop's: two 16 MiB semi-spaces), and it
// shrinks it only at a scavenge that runs while little is being allocated: an idle server
// allocates a few KiB a second, so its next scavenge came minutes later, and the 32 MiB stayed
// resident (docs/performance-history.md, memory). Capping the semi-spaces instead (1 MiB) cost
// 5.5x the collection time under load.
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How often the new space is looked at: a scavenge then follows a load by at most twice this. */
export const YOUNG_CHECK_MS = 5_000;
/**
 * Allocation below this rate counts as quiet. V8 shrinks the new space at a scavenge when its
 * recent allocation rate is under 1,000 bytes a millisecond; half of that leaves a margin.
 */
const QUIET_BYTES_PER_MS = 500;
/** A new space at or under this (V8 starts it at 1 MiB) has nothing to give back. */
const SMALL_NEW_SPACE_BYTES = 2 * 1024 * 1024;

/** Looks left out at most between tries that did not shrink the new space (~5 min at YOUNG_CHECK_MS). */
const MAX_LOOKS_SKIPPED = 63;

type Collect = (options: { readonly type: "minor" }) => void;

/**
 * V8's gc() without exposing it to the process's code: taken from a context made while the flag is
 * on. V8's flags are the process's, and each store thread takes its own as it starts, beside the
 * event loop: another thread's reset can land between this one's set and its context, which threw
 * ReferenceError at a thread's first line and killed the log writer as it started (its appends
 * failed with 503 until the replacement). So it tries again, and without gc a server only keeps
 * its young generation: undefined after TRIES, never a throw.
 */
export function collector(): Collect | undefined {
  // A process started with --expose-gc has it, and keeps the flag for the contexts it makes later.
  const exposed = (globalThis as { gc?: Collect }).gc;
  if (exposed !== undefined) return exposed;
  for (let attempt = 0; attempt < TRIES; attempt++) {
    setFlagsFromString("--expose-gc");
    let found: unknown;
    try {
      found = runInNewContext("typeof gc === 'function' ? gc : undefined");
    } finally {
      setFlagsFromString("--no-expose-gc");
    }
    if (typeof found === "function") return found as Collect;
  }
  return undefined;
}

const TRIES = 50;

function newSpace(): { readonly committed: number; readonly used: number } {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return { committed: space?.physical_space_size ?? 0, used: space?.space_used_size ?? 0 };
}

/**
 * Looks at the new space every `everyMs`; when it is large and what was allocated since the last
 * look is little, runs one scavenge, which (allocation being low) shrinks it to its minimum. A
 * scavenge of an idle heap finds almost nothing alive: a few milliseconds. Returns the stop.
 */
export function shrinkIdleYoungGeneration(everyMs = YOUNG_CHECK_MS): () => void {
  const collect = collector();
  if (collect === undefined) return () => undefined;
  let usedBefore = newSpace().used;
  // After a scavenge that did not shrink it, the next tries wait 1, 2, 4… looks (at most
  // MAX_LOOKS_SKIPPED), until a load: V8 may not have seen allocation go quiet yet, or may hold
  // the space at its size (--min-semi-space-size, as bench:instructions runs it), which was
  // otherwise scavenged at every look while idle, forever.
  let skip = 0;
  let skipped = 0;
  const timer = setInterval(() => {
    const { committed, used } = newSpace();
    // Used falls when a scavenge ran since the last look: allocation was not quiet then.
    const quiet = used >= usedBefore && used - usedBefore < QUIET_BYTES_PER_MS * everyMs;
    if (!quiet) skip = skipped = 0;
    else if (committed > SMALL_NEW_SPACE_BYTES && skipped++ >= skip) {
      collect({ type: "minor" });
      skip = newSpace().committed < committed ? 0 : Math.min(MAX_LOOKS_SKIPPED, 2 * skip + 1);
      skipped = 0;
    }
    usedBefore = newSpace().used;
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
