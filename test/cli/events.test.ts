import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/store/types.js";
import { inStore, rowOf, tempDir, vane } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

let n = 0;
function event(extra: Partial<StoredEvent> & { receivedAt: string }): StoredEvent {
  n += 1;
  const base = { orgId: "org-1", projectId: "shop", env: "production", type: "track" as const, unitKey: `u${n}`, timestamp: extra.receivedAt, ...extra };
  return {
    id: `evt-${n}`,
    ...base,
    body: { type: base.type, unitKey: base.unitKey, timestamp: base.timestamp, orgId: base.orgId, projectId: base.projectId, env: base.env, ...(base.name !== undefined && { event: base.name }) },
  };
}

/** A store filled through the EventStore interface: known, discovered and other-typed events. */
async function filledStore(): Promise<string> {
  const data = tempDir();
  await inStore(data, async (stores) => {
    await stores.events.append([
      event({ receivedAt: "2026-03-01T10:00:00.000Z", name: "purchase" }),
      event({ receivedAt: "2026-03-01T10:05:00.000Z", name: "wishlist_add", discovered: true }),
      event({ receivedAt: "2026-03-01T10:06:00.000Z", type: "decision" }),
    ]);
    await stores.events.append([
      event({ receivedAt: "2026-03-02T09:00:00.000Z", name: "wishlist_add", discovered: true }),
      event({ receivedAt: "2026-03-02T09:30:00.000Z", name: "share", discovered: true, projectId: "blog", env: "staging" }),
      event({ receivedAt: "2026-03-02T09:45:00.000Z", type: "exposure", projectId: "blog" }),
    ]);
  });
  return data;
}

describe("vane events", () => {
  it("discovered: names per project/env with counts, first and last seen", async () => {
    const run = await vane("events", "discovered", "--data", await filledStore());
    expect(run.code).toBe(0);
    const lines = run.out.split("\n");
    expect(lines[0]).toMatch(/^PROJECT +ENV +ORG +EVENT +COUNT +FIRST SEEN +LAST SEEN$/);
    expect(lines).toHaveLength(3);
    expect(rowOf(run.out, "shop")).toMatch(/^shop +production +org-1 +wishlist_add +2 +2026-03-01T10:05:00Z +2026-03-02T09:00:00Z$/);
    expect(rowOf(run.out, "blog")).toMatch(/^blog +staging +org-1 +share +1 +2026-03-02T09:30:00Z +2026-03-02T09:30:00Z$/);
    expect(run.out).not.toContain("purchase");
  });

  it("discovered: says so when there are none", async () => {
    const data = tempDir();
    await inStore(data, async (stores) => void (await stores.events.append([event({ receivedAt: "2026-03-01T10:00:00.000Z", name: "purchase" })])));
    expect((await vane("events", "discovered", "--data", data)).out).toMatch(/^No auto-discovered events in /);
  });

  it("list: newest first, one compact JSON object per line, with seq, id and receivedAt", async () => {
    const run = await vane("events", "list", "--data", await filledStore());
    expect(run.code).toBe(0);
    const lines = run.out.split("\n");
    expect(lines).toHaveLength(6);
    expect(lines.every((line) => !line.includes(" ") && !line.includes("\n"))).toBe(true);
    const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.map((e) => e.seq)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(events[1]).toMatchObject({ type: "track", event: "share", discovered: true, projectId: "blog", env: "staging", receivedAt: "2026-03-02T09:30:00.000Z" });
    expect(events[5]).toMatchObject({ seq: 1, type: "track", event: "purchase" });
    expect(events[5]).not.toHaveProperty("discovered");
    expect(typeof events[0]!.id).toBe("string");
  });

  it("list: the stored id wins over an id field of the event's body", async () => {
    const data = tempDir();
    const stored = event({ receivedAt: "2026-03-01T10:00:00.000Z", name: "purchase" });
    await inStore(data, async (stores) => void (await stores.events.append([{ ...stored, body: { ...stored.body, id: "client-side", seq: 99 } }])));
    const line = JSON.parse((await vane("events", "list", "--data", data)).out) as Record<string, unknown>;
    expect(line).toMatchObject({ seq: 1, id: stored.id, event: "purchase" });
    expect(Object.keys(line).slice(0, 3)).toEqual(["seq", "id", "receivedAt"]);
  });

  it("list: filters by project and type, and limits", async () => {
    const data = await filledStore();
    const shopTracks = await vane("events", "list", "--project", "shop", "--type", "track", "--data", data);
    expect(shopTracks.out.split("\n").map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([4, 2, 1]);
    const latest = await vane("events", "list", "--limit", "2", "--data", data);
    expect(latest.out.split("\n").map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([6, 5]);
    const none = await vane("events", "list", "--project", "nope", "--data", data);
    expect(none).toMatchObject({ code: 0, out: "", err: "(no events)" });
  });

  it("count: with and without filters", async () => {
    const data = await filledStore();
    expect((await vane("events", "count", "--data", data)).out).toBe("6");
    expect((await vane("events", "count", "--project", "blog", "--data", data)).out).toBe("2");
    expect((await vane("events", "count", "--type", "decision", "--data", data)).out).toBe("1");
  });

  it.each([
    [["list", "--type", "click"], '--type must be one of exposure, track, decision, got "click"'],
    [["list", "--limit", "0"], '--limit must be an integer from 1 to 100000, got "0"'],
    [["list", "--limit", "ten"], '--limit must be an integer from 1 to 100000, got "ten"'],
    [["count", "--type", "purchase"], "--type must be one of"],
  ])("refuses %j with usage and exit code 2", async (args, message) => {
    const run = await vane("events", ...args, "--data", tempDir());
    expect(run.code).toBe(2);
    expect(run.err).toContain(message);
    expect(run.err).toContain(`Usage: vane events ${args[0]}`);
  });
});

describe("vane events prune", () => {
  it("deletes what is past --retain-days and behind both derived copies, nothing else", async () => {
    const data = await filledStore(); // six events received on 2026-03-01 and 02
    const before = await vane("events", "prune", "--retain-days", "1", "--data", data);
    expect(before.out).toMatch(/^Pruned 0 events and 0 remembered event ids from /); // nothing derived yet
    await inStore(data, async (stores) => {
      await stores.events.setCheckpoint("parquet", 6);
      await stores.events.setCheckpoint("learning", 4);
    });
    const run = await vane("events", "prune", "--retain-days", "1", "--data", data);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^Pruned 4 events and 0 remembered event ids from /);
    expect(await inStore(data, (stores) => loggedEvents(stores.events).count())).toBe(2);
  });

  it("refuses a retention that is not a positive number", async () => {
    const run = await vane("events", "prune", "--retain-days", "0", "--data", await filledStore());
    expect(run.code).toBe(2);
    expect(run.err).toContain('--retain-days must be a number greater than 0, got "0"');
  });
});
