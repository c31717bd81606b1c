// Several servers on one store, as `vane serve --workers N` or servers behind a load balancer run
// them: one learns (the learner lease), every one decides from what it learned, and a decision
// made on one server is rewarded through another. Run against every store that can be shared.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { type RunningServer, type NodeServerOptions, startNodeServer } from "../../src/server/node.js";
import type { KeyRecord, Stores } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { secret, sha256Hex } from "../cli/helpers.js";
import { waitFor } from "../wait.js";

export interface SharedStore {
  /** Options that put a server on the shared store. */
  readonly server: Pick<NodeServerOptions, "dataDir" | "storeUrl">;
  /** The store as another process (the CLI) sees it. */
  open(): Promise<Stores & { writeAll(w: { keys: readonly KeyRecord[]; bundles: readonly Bundle[]; storedAt: string }): Promise<boolean>; close(): Promise<void> }>;
  cleanup(): Promise<void>;
}

const SK = secret("sk", "shared-store");
const KEY: KeyRecord = { id: `key_${sha256Hex(SK).slice(0, 16)}`, secretHash: sha256Hex(SK), kind: "sk", orgId: "org", projectId: "proj", scopes: ["sdk:read", "sdk:write"], createdAt: "2026-11-01T00:00:00.000Z" };
const RATES = { k0: 0.1, k1: 0.7 };

const BUNDLE: Bundle = policyBundle({ kind: "thompson", reward: { event: "win", type: "binary", windowSeconds: 3600 } }, Object.keys(RATES).length);

async function post(server: RunningServer, path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${SK}`, "content-type": "application/json" }, body: JSON.stringify(body) });
}

interface Decided {
  readonly decisionId: string;
  readonly allocationKey: string;
}

async function decide(server: RunningServer, count: number, round: string): Promise<Decided[]> {
  const decisions = Array.from({ length: count }, (_, i) => ({ policyId: "pol", context: { userId: `${round}-${i}` } }));
  const res = await post(server, "/v1/decide/batch", { decisions });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: Decided[] }).results;
}

/** Population trials per arm, as the store holds them (the first statistic of an arm is its count). */
async function storedTrials(shared: SharedStore): Promise<number> {
  const stores = await shared.open();
  try {
    return (await stores.learning.arms()).filter((a) => a.policyId === "pol" && a.entity === "" && a.armKey in RATES).reduce((n, a) => n + a.stats[0]!, 0);
  } finally {
    await stores.close();
  }
}

export function describeSharedStore(name: string, makeStore: () => Promise<SharedStore>): void {
  describe(`two servers on one ${name} store`, () => {
    const running: RunningServer[] = [];
    let shared: SharedStore | undefined;
    afterEach(async () => {
      for (const server of running.splice(0)) await server.close().catch(() => undefined);
      await shared?.cleanup();
    });

    const start = async (store: SharedStore) => {
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", ...store.server, leaseTtlMs: 1_000, learnMs: 50 });
      running.push(server);
      return server;
    };

    it("learns once from decisions on one server and rewards through the other, and both move traffic to the best arm; the other takes over when the learner stops", async () => {
      shared = await makeStore();
      const setup = await shared.open();
      await setup.writeAll({ keys: [KEY], bundles: [BUNDLE], storedAt: "2026-11-25T00:00:00.000Z" });
      await setup.close();
      const a = await start(shared);
      const b = await start(shared);
      let random = 42;
      const next = () => ((random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      let decided = 0;
      const round = async (deciding: RunningServer, rewarding: RunningServer, label: string) => {
        const results = await decide(deciding, 50, label);
        decided += results.length;
        const wins = results.filter((r) => next() < RATES[r.allocationKey as keyof typeof RATES]);
        const events = wins.map((r) => ({ type: "track", event: "win", unitKey: "u", decisionId: r.decisionId, timestamp: new Date().toISOString() }));
        if (events.length > 0) expect((await post(rewarding, "/v1/events/batch", { events })).status).toBe(200);
        await sleep(150);
      };
      for (let i = 0; i < 16; i++) await round(a, b, `ab-${i}`);
      // Every decision counted once, by one learner (two would count each twice).
      const learnedAll = async () => (await storedTrials(shared!)) === decided;
      await waitFor(learnedAll, "every decision learned once", { everyMs: 100 });
      // The servers that do not learn reload what was learned (each second).
      for (const server of [a, b]) {
        let check = 0;
        await waitFor(async () => {
          const results = await decide(server, 200, `check-${running.indexOf(server)}-${check++}`);
          decided += results.length;
          return results.filter((r) => r.allocationKey === "k1").length / results.length > 0.8;
        }, `server ${running.indexOf(server)} deciding mostly for the best arm`, { everyMs: 200 });
      }
      await waitFor(learnedAll, "every decision learned once", { everyMs: 100 });

      // The first server goes: if it learned, the other takes over; learning goes on exactly once.
      await a.close();
      running.splice(running.indexOf(a), 1);
      for (let i = 0; i < 4; i++) await round(b, b, `b-${i}`);
      await waitFor(learnedAll, "every decision learned once after the learner stopped", { everyMs: 100 });
    }, 240_000);
  });
}
