// The hello-world baselines that bound bench:http's durable rows (issue 15): the durable log's
// group commit answers nothing before its sync, the hello-world's routes over real HTTP, and the
// report's bounds computed from the same run's rows.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterEach, describe, expect, it } from "vitest";
import { type AppendOnlyFile, DurableLog } from "../../bench/http/durable-log.js";
import { helloApp } from "../../bench/http/hello-app.js";
import { checkTargets } from "../../bench/http/http-report.js";
import type { ScenarioRow } from "../../bench/harness/load.js";

/** A file whose syncs finish only when the test says, recording what each covered. */
class HeldFile implements AppendOnlyFile {
  readonly written: string[] = [];
  readonly synced: number[] = [];
  failNextWrite = false;
  private releases: (() => void)[] = [];

  async write(text: string | Uint8Array): Promise<{ bytesWritten: number; buffer: string }> {
    if (this.failNextWrite) {
      this.failNextWrite = false;
      throw new Error("disk full");
    }
    this.written.push(String(text));
    return { bytesWritten: String(text).length, buffer: String(text) };
  }

  datasync(): Promise<void> {
    return new Promise((done) =>
      this.releases.push(() => {
        this.synced.push(this.written.length);
        done();
      }),
    );
  }

  releaseSync(): void {
    this.releases.shift()?.();
  }

  get syncsWaiting(): number {
    return this.releases.length;
  }

  async close(): Promise<void> {}
}

const tick = () => new Promise((done) => setImmediate(done));

describe("the durable log's group commit", () => {
  it("answers an append only after a sync that covers it, and gives what arrives meanwhile to the next sync", async () => {
    const file = new HeldFile();
    const log = new DurableLog(file);
    const answered: string[] = [];
    const first = log.append("a").then(() => answered.push("a"));
    await tick();
    expect(file.written).toEqual(["a\n"]);
    const rest = ["b", "c", "d"].map((text) => log.append(text).then(() => answered.push(text)));
    await tick();
    expect(answered).toEqual([]); // written, not yet synced
    expect(file.syncsWaiting).toBe(1);
    file.releaseSync();
    await first;
    await tick();
    expect(answered).toEqual(["a"]);
    expect(file.written).toEqual(["a\n", "b\nc\nd\n"]); // one write and one sync for the three
    file.releaseSync();
    await Promise.all(rest);
    expect(answered).toEqual(["a", "b", "c", "d"]);
    expect(file.synced).toEqual([1, 2]);
  });

  it("refuses the group a write failed for, and goes on with the next", async () => {
    const file = new HeldFile();
    const log = new DurableLog(file);
    file.failNextWrite = true;
    await expect(log.append("lost")).rejects.toThrow("disk full");
    const next = log.append("kept");
    await tick();
    file.releaseSync();
    await next;
    expect(file.written).toEqual(["kept\n"]);
  });
});

describe("the hello-world baseline over HTTP", () => {
  let dir: string | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function start(answer?: unknown): Promise<{ url: string; logPath: string }> {
    dir = mkdtempSync(join(tmpdir(), "vane-hello-"));
    const logPath = join(dir, "bodies.log");
    const log = await DurableLog.open(logPath);
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: helloApp(log, answer).fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
    });
    close = () => new Promise<void>((done) => server.close(() => void log.close().then(done)));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logPath };
  }

  const post = (url: string, body: string) => fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });

  it("stores a durable route's body before it answers, and only the durable routes' bodies", async () => {
    const { url, logPath } = await start();
    const batch = JSON.stringify({ events: [{ type: "track" }, { type: "track" }, { type: "exposure" }] });
    expect(await (await post(`${url}/batch`, batch)).json()).toEqual({ accepted: 3 });
    expect(readFileSync(logPath, "utf8")).toBe("");
    expect(await (await post(`${url}/durable/batch`, batch)).json()).toEqual({ accepted: 3 });
    expect(readFileSync(logPath, "utf8")).toBe(`${batch}\n`);
    const context = JSON.stringify({ context: { userId: "u-1" } });
    expect(await (await post(`${url}/durable`, context)).json()).toEqual({ ok: true, object: true });
    expect(readFileSync(logPath, "utf8")).toBe(`${batch}\n${context}\n`);
    expect(await (await post(url, context)).json()).toEqual({ ok: true, object: true });
    expect(readFileSync(logPath, "utf8").split("\n")).toHaveLength(3);
  });

  it("answers POST /answer with the object it was given, after parsing the body", async () => {
    const answer = { decisionId: "d-1", values: { "a.b": [1, "é"] } };
    const { url } = await start(answer);
    expect(await (await post(`${url}/answer`, JSON.stringify({ context: {} }))).json()).toEqual(answer);
  });

  it("has no POST /answer without an answer", async () => {
    const { url } = await start();
    expect((await post(`${url}/answer`, "{}")).status).toBe(404);
  });
});

function row(key: string, reqPerSec: number, eventsPerSec: number | null = null): ScenarioRow {
  return { key, name: key, reqPerSec, eventsPerSec, p99Ms: 5 } as ScenarioRow;
}

describe("the report's bounds", () => {
  it("puts the same run's durable hello-world figures beside the targets they bound", () => {
    const rows = [row("hello-post", 10_000), row("hello-durable", 8_000), row("resolve", 3_000), row("hello-batch", 2_400, 240_000), row("hello-durable-batch", 2_200, 220_000), row("events", 210, 21_000)];
    const targets = checkTargets(rows, [{ label: "batch events (exposure + track)", stored: 21_000, acknowledged: 21_000, ok: true }]);
    const resolve = targets.find((t) => t.label.startsWith("resolve ≥"))!;
    expect(resolve).toMatchObject({ measured: "30% (3.00 k req/s)", met: false, bound: "hello-world POST + fdatasync: 80% (8.00 k req/s)" });
    const events = targets.find((t) => t.label.startsWith("events"))!;
    expect(events.bound).toBe("hello-world parsing the batches: 240 k events/s; parsing and fdatasyncing them: 220 k");
    expect(targets.find((t) => t.label.startsWith("config"))!.bound).toBeUndefined();
  });

  it("leaves a bound out when its row was not run", () => {
    const targets = checkTargets([row("hello-post", 10_000), row("resolve", 3_000)], []);
    expect(targets.find((t) => t.label.startsWith("resolve ≥"))!.bound).toBeUndefined();
    expect(targets.find((t) => t.label.startsWith("events"))!.bound).toBeUndefined();
  });
});
