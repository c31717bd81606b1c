// A short store fault under load, then SIGTERM (issue 32): a real `vane serve` takes events,
// decisions and config polls while one store table is renamed away for 2 s by another connection
// (or the whole file is locked, or the Parquet folder is unusable), and then is told to stop. It
// must exit with code 0 (within its own stop deadline), every acknowledged event must be stored
// exactly once, and after a restart the Parquet copy must hold every stored event exactly once.
import { renameSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { inStore, tempDir } from "../cli/helpers.js";
import { type ServeProcess, serveProcess } from "../cli/serve-process.js";
import { LEARNED_CHECKPOINT } from "../../src/store/sqlite/learning-store.js";
import { parquetRows } from "../store/parquet-files.js";
import { loggedEvents } from "../store/logged-events.js";
import { WAIT_MS, sleep, waitFor } from "../wait.js";

const FAULT_MS = 2_000;
const PER_BATCH = 20;

interface Fault {
  readonly name: string;
  /** Starts the fault; the returned function ends it. */
  begin(dataDir: string): () => void;
}

const renamed = (table: string): Fault => ({
  name: `table ${table} renamed`,
  begin(dataDir) {
    const db = new Database(join(dataDir, "vane.db"), { timeout: 5_000 });
    db.exec(`ALTER TABLE ${table} RENAME TO ${table}_away`);
    return () => {
      db.exec(`ALTER TABLE ${table}_away RENAME TO ${table}`);
      db.close();
    };
  },
});

const FAULTS: readonly Fault[] = [
  ...["bundles", "keys", "event_log", "event_ids", "checkpoints", "leases", "learned_arms", "pending_decisions"].map(renamed),
  {
    name: "the database locked by another process",
    begin(dataDir) {
      const db = new Database(join(dataDir, "vane.db"), { timeout: 5_000 });
      db.exec("BEGIN EXCLUSIVE");
      return () => {
        db.exec("ROLLBACK");
        db.close();
      };
    },
  },
  {
    name: "the Parquet folder unusable (I/O errors: a file where the folder was)",
    begin(dataDir) {
      const folder = join(dataDir, "parquet");
      mkdirSync(folder, { recursive: true });
      renameSync(folder, `${folder}-away`);
      writeFileSync(folder, "not a folder");
      return () => {
        rmSync(folder);
        renameSync(`${folder}-away`, folder);
      };
    },
  },
];

/** Event batches, decisions and config polls until stopped; the ids of every acknowledged event. */
function load(served: ServeProcess) {
  const acked: string[] = [];
  let stopped = false;
  const headers = (key: string) => ({ Authorization: `Bearer ${key}`, "Content-Type": "application/json" });
  const writer = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      const events = Array.from({ length: PER_BATCH }, (_, i) => ({ id: `w${w}-b${n}-e${i}`, type: "track", unitKey: `u${w}-${n}`, timestamp: new Date().toISOString(), event: "purchase", properties: { sku: "A-1" } }));
      const response = await fetch(`${served.url}/v1/events/batch`, { method: "POST", headers: headers(served.pk), body: JSON.stringify({ events }) });
      const body = (await response.json()) as { accepted?: number };
      if (response.status === 200) {
        expect(body.accepted).toBe(PER_BATCH);
        acked.push(...events.map((e) => e.id));
      } else {
        expect(response.status).toBe(503); // the contract's answer to a store that fails: nothing stored
        await sleep(50);
      }
    }
  };
  const other = async () => {
    for (let n = 0; !stopped; n++) {
      const decided = await fetch(`${served.url}/v1/decide/recs-strategy`, { method: "POST", headers: headers(served.sk), body: JSON.stringify({ context: { userId: `d${n}` } }) });
      expect([200, 503]).toContain(decided.status);
      await decided.arrayBuffer();
      const config = await fetch(`${served.url}/v1/config/demo`, { headers: headers(served.pk) });
      expect([200, 503]).toContain(config.status);
      await config.arrayBuffer();
    }
  };
  const running = Promise.all([writer(0), writer(1), other()]);
  return {
    acked,
    stop: async () => {
      stopped = true;
      await running;
    },
  };
}

const storedTracks = (dataDir: string) =>
  inStore(dataDir, async (stores) => (await loggedEvents(stores.events).list({ type: "track", limit: 1_000_000 })).map((e) => ({ seq: e.seq, id: e.event.clientId! })));

/** The exit, or "still running" past a deadline that only a hang reaches (the server's own stop deadline is 8 s). */
async function exitOf(served: ServeProcess): Promise<{ code: number | null } | "still running"> {
  const late = sleep(WAIT_MS).then(() => "still running" as const);
  return Promise.race([served.exited, late]);
}

describe("vane serve after a short store fault under load", () => {
  it.each(FAULTS)("$name: SIGTERM exits cleanly, nothing acknowledged is lost, and the copies catch up after a restart", async (fault) => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--log-level", "silent"]);
    const traffic = load(served);
    await waitFor(() => traffic.acked.length > 0, "an event acknowledged before the fault");
    const end = fault.begin(dataDir);
    await sleep(FAULT_MS); // the fault's length, while the load goes on
    end();
    const before = traffic.acked.length;
    await waitFor(() => traffic.acked.length > before, "an event acknowledged after the fault ended");
    await traffic.stop();

    served.child.kill("SIGTERM");
    const exit = await exitOf(served);
    if (exit === "still running") served.child.kill("SIGKILL");
    expect(exit).toEqual({ code: 0, signal: null });

    const stored = await storedTracks(dataDir);
    expect(new Set(stored.map((s) => s.id)).size).toBe(stored.length); // none twice
    const storedIds = new Set(stored.map((s) => s.id));
    expect(traffic.acked.filter((id) => !storedIds.has(id))).toEqual([]); // none acknowledged lost

    const again = await serveProcess(dataDir, ["--log-level", "silent"]);
    const copied = async () => (await parquetRows(dataDir)).filter((row) => row.type === "track").map((row) => Number(row.seq));
    const lastSeq = Math.max(...stored.map((s) => s.seq));
    const learned = () => inStore(dataDir, (stores) => stores.events.checkpoint(LEARNED_CHECKPOINT));
    await waitFor(async () => (await copied()).length >= stored.length && (await learned()) >= lastSeq, "the restarted server's Parquet copy and learner to catch up", { everyMs: 250 });
    again.child.kill("SIGTERM");
    expect(await exitOf(again)).toEqual({ code: 0, signal: null });
    const seqs = await copied();
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs.sort((a, b) => a - b)).toEqual(stored.map((s) => s.seq).sort((a, b) => a - b));
  }, 180_000);
});
