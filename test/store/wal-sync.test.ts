// Durability off the event loop: which fsync a write waits for, and group commit answering only
// after it. The fsync is a controllable fake here; the real one runs in every FULL store test.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { WalSync } from "../../src/store/sqlite/wal-sync.js";
import { loggedEvents } from "./logged-events.js";

/** An fsync whose calls are counted and finished by hand. */
class FakeFsync {
  readonly calls: { finish: () => void; fail: (e: Error) => void }[] = [];
  readonly run = () =>
    new Promise<void>((finish, fail) => {
      this.calls.push({ finish, fail });
    });
}

const settled = async <T>(p: Promise<T>) => {
  let state = "pending";
  p.then(() => (state = "resolved"), () => (state = "rejected"));
  await new Promise((r) => setImmediate(r));
  return state;
};

describe("WalSync", () => {
  it("a write made while an fsync runs waits for the next fsync, which starts when that one ends", async () => {
    const fsync = new FakeFsync();
    const wal = new WalSync("unused", fsync.run);
    const first = wal.sync();
    expect(fsync.calls).toHaveLength(1);
    const second = wal.sync();
    const third = wal.sync(); // shares the second's fsync
    expect(third).toBe(second);
    expect(fsync.calls).toHaveLength(1);
    fsync.calls[0]!.finish();
    expect(await settled(first)).toBe("resolved");
    expect(await settled(second)).toBe("pending");
    expect(fsync.calls).toHaveLength(2);
    fsync.calls[1]!.finish();
    expect(await settled(second)).toBe("resolved");
    expect(await settled(third)).toBe("resolved");
  });

  it("a failed fsync fails its waiters; the next write tries again", async () => {
    const fsync = new FakeFsync();
    const wal = new WalSync("unused", fsync.run);
    const failing = wal.sync();
    fsync.calls[0]!.fail(new Error("EIO"));
    await expect(failing).rejects.toThrow("EIO");
    const retry = wal.sync();
    expect(fsync.calls).toHaveLength(2);
    fsync.calls[1]!.finish();
    await expect(retry).resolves.toBeUndefined();
  });
});

describe("GroupCommit with a durability wait", () => {
  let dir: string;
  let db: Database.Database;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-walsync-"));
    db = new Database(path.join(dir, "t.db"));
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (v TEXT NOT NULL UNIQUE)");
  });
  afterEach(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("answers a group after its fsync, and commits the next group meanwhile", async () => {
    const fsync = new FakeFsync();
    const wal = new WalSync("unused", fsync.run);
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const group = new GroupCommit(db, { apply: (v: string) => insert.run(v).changes, durable: () => wal.sync() });
    const a = group.submit("a");
    await new Promise((r) => setImmediate(r)); // group 1 commits, its fsync starts
    const b = group.submit("b");
    const duplicate = expect(group.submit("a")).rejects.toThrow(/UNIQUE/); // fails alone, at once
    await new Promise((r) => setImmediate(r)); // group 2 commits while group 1's fsync runs
    expect(db.prepare("SELECT count(*) FROM t").pluck().get()).toBe(2);
    await duplicate;
    expect(await settled(a)).toBe("pending");
    fsync.calls[0]!.finish();
    expect(await settled(a)).toBe("resolved");
    expect(await settled(b)).toBe("pending"); // committed after fsync 1 began
    fsync.calls[1]!.finish();
    expect(await settled(b)).toBe("resolved");
  });

  it("fails the group's calls when the fsync fails", async () => {
    const fsync = new FakeFsync();
    const wal = new WalSync("unused", fsync.run);
    const group = new GroupCommit(db, { apply: (v: string) => db.prepare("INSERT INTO t (v) VALUES (?)").run(v).changes, durable: () => wal.sync() });
    const a = group.submit("a");
    await new Promise((r) => setImmediate(r));
    fsync.calls[0]!.fail(new Error("EIO"));
    await expect(a).rejects.toThrow("EIO");
  });
});

describe("a FULL store", () => {
  it("syncs the real WAL file and keeps every acknowledged event across a reopen", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-full-"));
    try {
      const stores = openSqliteStores({ dataDir: dir });
      const at = new Date().toISOString();
      const event = (i: number) => ({ id: `e${i}`, receivedAt: at, orgId: "o", projectId: "p", env: "production", type: "track" as const, unitKey: "u", timestamp: at, name: "n", body: { i } });
      const receipts = await Promise.all(Array.from({ length: 20 }, (_, i) => stores.events.append([event(i)])));
      expect(Math.max(...receipts.map((r) => r.lastSeq))).toBe(20);
      expect(fs.existsSync(path.join(dir, "vane.db-wal"))).toBe(true);
      stores.close();
      const again = openSqliteStores({ dataDir: dir });
      expect(await loggedEvents(again.events).count()).toBe(20);
      again.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
