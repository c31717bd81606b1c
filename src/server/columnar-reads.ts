// The Node host's event reads (the admin API's, the console's): DuckDB over the Parquet archive
// and the log's tail, as `vane events` reads them (src/store/columnar/event-view.ts), so the
// server never scans its log for them. An in-memory database per request, closed after it: the
// server holds no DuckDB file. One request's reads at a time: each may take DuckDB's whole memory
// limit (half the machine's, as the CLI's), and two at once would take it twice.
import { EventView, type ViewSources } from "../store/columnar/event-view.js";
import type { ReadEvents } from "./admin/event-reads.js";

export function columnarReads(sources: ViewSources): ReadEvents {
  let previous: Promise<unknown> = Promise.resolve();
  return (use) => {
    const read = previous.then(async () => {
      const view = await EventView.open(sources);
      try {
        return await use(view);
      } finally {
        view.close();
      }
    });
    previous = read.catch(() => undefined);
    return read;
  };
}
