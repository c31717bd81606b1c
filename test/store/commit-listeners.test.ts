// While an append waits for its commit (here: another connection holds SQLite's write lock), the
// store keeps only the events a commit listener reads. A batch's parsed events held through the
// wait live through young-generation GCs, which copy and promote them: under load at 64
// connections that was most of POST /v1/events' GC.
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import { READS_NONE, type StoredEvent } from "../../src/store/types.js";
import { makeEvent, tempDirs } from "./fixtures.js";
import { waitFor } from "../wait.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const tempDir = tempDirs("vane-commit-listeners-");
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("an append waiting for its commit", () => {
  it("holds the events a listener reads, and lets the others go", async () => {
    const dir = tempDir();
    const stores = openSqliteStores({ dataDir: dir, busyTimeoutMs: 30_000, writer: "worker" });
    const cli = new Database(path.join(dir, DB_FILE_NAME));
    try {
      const fed: { ids: string[]; first: number; last: number }[] = [];
      stores.events.onCommitted((events, span) => fed.push({ ids: events.map(({ event }) => event.id), ...span }), (event) => event.decisionId !== undefined);
      stores.events.onCommitted(() => undefined, READS_NONE);
      cli.exec("BEGIN IMMEDIATE");
      // Built in a function of its own, so that nothing here holds the batch past the call.
      const refs: WeakRef<StoredEvent>[] = [];
      const append = (() => {
        const batch = Array.from({ length: 20 }, (_, i) => makeEvent(`held-${i}`, i % 4 === 0 ? { decisionId: `dec-${i}` } : {}));
        for (const event of batch) refs.push(new WeakRef(event));
        return stores.events.append(batch);
      })();
      // Once the writer thread has the batch and waits for the lock, only the listener's events live.
      const read = Array.from({ length: 20 }, (_, i) => i % 4 === 0);
      const alive = () => refs.map((ref) => ref.deref() !== undefined);
      await waitFor(async () => {
        gc();
        await turn();
        return alive().every((live, i) => live === read[i]);
      }, "the events no listener reads collected while the append waits", { everyMs: 50 });
      expect(alive()).toEqual(read);
      cli.exec("ROLLBACK");
      expect(await append).toEqual({ lastSeq: 20, stored: 20, duplicates: 0 });
      expect(fed).toEqual([{ ids: [0, 4, 8, 12, 16].map((i) => `evt-held-${i}`), first: 1, last: 20 }]);
      expect((await stores.events.readAfter(0, 30)).map(({ event }) => event.id)).toEqual(Array.from({ length: 20 }, (_, i) => `evt-held-${i}`));
    } finally {
      if (cli.inTransaction) cli.exec("ROLLBACK");
      cli.close();
      await stores.close();
    }
  });

  it("feeds only the listeners there when it was made: one that came while it waited reads it from the store", async () => {
    const dir = tempDir();
    const stores = openSqliteStores({ dataDir: dir, busyTimeoutMs: 30_000, writer: "worker" });
    const cli = new Database(path.join(dir, DB_FILE_NAME));
    try {
      // The server's wake-up listener reads no event, so the waiting append keeps none.
      stores.events.onCommitted(() => undefined, READS_NONE);
      cli.exec("BEGIN IMMEDIATE");
      const append = stores.events.append(Array.from({ length: 5 }, (_, i) => makeEvent(`late-${i}`, { decisionId: `dec-${i}` })));
      await turn();
      // A learner taking the lease now: its feed must not be told seqs 1..5 hold none of its events.
      const fed: { ids: string[]; first: number; last: number }[] = [];
      stores.events.onCommitted((events, span) => fed.push({ ids: events.map(({ event }) => event.id), ...span }), (event) => event.decisionId !== undefined);
      cli.exec("ROLLBACK");
      expect(await append).toEqual({ lastSeq: 5, stored: 5, duplicates: 0 });
      const after = await stores.events.append([makeEvent("after", { decisionId: "dec-after" })]);
      expect(after.lastSeq).toBe(6);
      expect(fed).toEqual([{ ids: ["evt-after"], first: 6, last: 6 }]);
    } finally {
      if (cli.inTransaction) cli.exec("ROLLBACK");
      cli.close();
      await stores.close();
    }
  });
});
