// A wait with a bound: whether a promise settled within some milliseconds. The timer is cleared
// either way, so a bound that did not run out keeps neither the event loop nor its closure alive.

/**
 * "settled" once `promise` fulfils or rejects (a rejection is the caller's to read on its own
 * copy of the promise; here it counts as settled and is never left unhandled), "late" after `ms`.
 */
export async function settleWithin(promise: PromiseLike<unknown>, ms: number): Promise<"settled" | "late"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), Math.max(0, ms))));
  const settled = Promise.resolve(promise).then(
    () => "settled" as const,
    () => "settled" as const,
  );
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
