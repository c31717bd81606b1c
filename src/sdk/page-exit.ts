// Browsers: the moment to send the last events. `pagehide` fires when the page goes away (and,
// unlike `unload`, keeps the back/forward cache usable); `visibilitychange` to hidden is often
// the last event a mobile browser delivers before it kills a tab. Elsewhere (Node, workers,
// web workers) there is no page and nothing is registered.

/** Calls `leave` whenever the page is hidden or hides itself away; returns the undo. */
export function onPageExit(leave: () => void): () => void {
  const host = globalThis as { document?: Document; addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener };
  const doc = host.document;
  if (doc === undefined || typeof host.addEventListener !== "function") return () => {};
  const hidden = (): void => {
    if (doc.visibilityState === "hidden") leave();
  };
  host.addEventListener("pagehide", leave);
  doc.addEventListener("visibilitychange", hidden);
  return () => {
    host.removeEventListener?.("pagehide", leave);
    doc.removeEventListener("visibilitychange", hidden);
  };
}
