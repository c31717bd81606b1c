// `vane events count` and `vane results` in processes of their own (the built CLI, as a user runs
// it) while a server takes exposures and archives them: each read counts every event acknowledged
// before it began and none twice (never more than were sent), and once writes stop, exactly all.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { waitFor } from "../wait.js";
import { tempDir } from "./helpers.js";

const ROOT = new URL("../../", import.meta.url);
const BATCH = 40;

/** The built CLI in a child process: its stdout, or a rejection with its stderr. */
function cli(...args: string[]): Promise<string> {
  const child = spawn(process.execPath, ["bin/vane.js", ...args], { cwd: ROOT });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => child.on("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`vane ${args.join(" ")} exited ${code}: ${err}`)))));
}

/** Exposures of fresh units to the demo's checkout test, one per unit. */
function exposures(batch: number): Record<string, unknown>[] {
  const timestamp = new Date().toISOString();
  return Array.from({ length: BATCH }, (_, i) => ({
    type: "exposure",
    unitKey: `u-${batch}-${i}`,
    timestamp,
    assignments: { "checkout.buttonColor": "blue" },
    layers: [{ layerId: "checkout", bucket: i, policyId: "checkout-test", policyKey: "checkout-test", allocationId: "checkout-control", allocationKey: "control" }],
  }));
}

describe("a CLI read while the server writes", () => {
  it("counts each acknowledged event once, in events count and in results, during writes and after", async () => {
    const data = tempDir();
    const seeded = openSqliteStores({ dataDir: data });
    await seeded.bundles.put(demoBundle(new Date(Date.now() - 60_000).toISOString()), new Date().toISOString());
    const { secret } = await createKey(seeded.keys, { kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"] }, { sha256: nodeSha256, now: Date.now() });
    await seeded.close();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir: data, catchUpMs: 50 });
    let sent = 0;
    let acknowledged = 0;
    let writing = true;
    const failures: string[] = [];
    const writer = (async () => {
      for (let batch = 0; writing; batch++) {
        sent += BATCH;
        const answer = await fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" }, body: JSON.stringify({ events: exposures(batch) }) });
        if (answer.status !== 200) failures.push(`status ${answer.status}`);
        acknowledged += BATCH;
      }
    })();
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const count = async () => Number(await cli("events", "count", "--type", "exposure", "--data", data, "--threads", "1"));
    const units = async () => {
      const results = JSON.parse(await cli("results", "checkout-test", "--until", until, "--json", "--data", data, "--threads", "1")) as { allocations: { units: number }[] };
      return results.allocations.reduce((sum, a) => sum + a.units, 0);
    };
    try {
      for (const read of [count, units, count]) {
        const before = acknowledged;
        const seen = await read();
        expect(seen).toBeGreaterThanOrEqual(before);
        expect(seen).toBeLessThanOrEqual(sent);
      }
      // Part of them archived, the rest in the log's tail: writes go on until the copy (niced, at
      // most one run a second) has archived some, so the final reads cover both.
      const archived = async () => {
        const stores = openSqliteStores({ dataDir: data });
        return (await stores.events.checkpoint("parquet").finally(() => stores.close())) > 0;
      };
      await waitFor(archived, "the Parquet copy to archive some of them", { everyMs: 100 });
      writing = false;
      await writer;
      expect(failures).toEqual([]);
      expect(await count()).toBe(acknowledged);
      expect(await units()).toBe(acknowledged);
    } finally {
      writing = false;
      await writer;
      await server.close();
    }
  }, 120_000);
});
