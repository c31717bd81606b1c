// Learned weights reach the served bundle: a new version and ETag, weights that follow the learned
// state with burn-in and floor, and /v1/resolve logging the weight as the decision's probability.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WeightsPublisher } from "../../src/adaptive/publisher.js";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";
import { CTA_BANDIT_VERSION, ctaBanditBundle } from "../adaptive/fixtures.js";

const VERSION = CTA_BANDIT_VERSION;
const engine = await loadEngine();


let server: TestServer;
let sk: string;
let publisher: WeightsPublisher;

beforeEach(async () => {
  server = await startTestServer();
  sk = await server.key({ kind: "sk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  await server.putBundle(ctaBanditBundle());
  publisher = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now() });
});
afterEach(() => server.close());

async function config() {
  const res = await call(server, "/v1/config/proj-1", { key: sk });
  return { etag: res.headers.get("ETag"), bundle: (await res.json()) as Bundle };
}

/** Decides `n` times and rewards arm b's decisions only. */
async function learnThatBWins(n: number) {
  const decisions = Array.from({ length: n }, (_, i) => ({ policyId: "pol-cta", context: { userId: `u-${i}` } }));
  const { results } = await (await call(server, "/v1/decide/batch", { key: sk, body: { decisions } })).json();
  const events = results
    .filter((r: { allocationKey: string }) => r.allocationKey === "arm-b")
    .map((r: { decisionId: string }) => ({ type: "track", event: "click", unitKey: "u", decisionId: r.decisionId, timestamp: new Date(server.clock.now()).toISOString() }));
  await call(server, "/v1/events/batch", { key: sk, body: { events } });
  server.clock.advance(61_000);
  await server.learner.catchUp();
}

describe("weights publication", () => {
  it("does not weigh a bundle again while neither it nor its learned state changed", async () => {
    let calls = 0;
    const counting = new Proxy(engine, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const watched = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine: counting, now: () => server.clock.now() });
    await learnThatBWins(9);
    expect(await watched.publish()).toEqual([]);
    expect(calls).toBeGreaterThan(0);
    const weighed = calls;
    server.clock.advance(60_000);
    expect(await watched.publish()).toEqual([]);
    expect(calls).toBe(weighed);
    await learnThatBWins(300);
    expect(await watched.publish()).toHaveLength(1);
    expect(calls).toBeGreaterThan(weighed);
  });

  it("publishes nothing during burn-in (the equal split stands)", async () => {
    await learnThatBWins(9);
    expect(await publisher.publish()).toEqual([]);
    expect((await config()).etag).toBe(`"${VERSION}"`);
  });

  it("after burn-in: a new version and ETag, the learned arm weighted, every arm at least the floor", async () => {
    await learnThatBWins(300);
    const before = await config();
    server.clock.advance(1000);
    const published = await publisher.publish();
    expect(published).toEqual([{ projectId: "proj-1", env: "production", version: new Date(server.clock.now()).toISOString() }]);
    const after = await config();
    expect(after.etag).not.toBe(before.etag);
    expect(after.bundle.version).toBe(published[0]!.version);
    const weights = after.bundle.layers[0]!.policies[0]!.weights!;
    // ε-greedy with ε = 0.3 over 3 arms: the best gets 0.8, the others 0.1; then the 0.05 floor.
    expect(weights[1]).toBeCloseTo(0.05 + 0.85 * 0.8, 6);
    expect(weights[0]).toBeCloseTo(0.05 + 0.85 * 0.1, 6);
    expect(weights.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);

    // Unchanged state: no new version.
    expect(await publisher.publish()).toEqual([]);

    // /v1/resolve now picks arms by the published weights and logs the weight as probability.
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => call(server, "/v1/resolve", { key: sk, body: { context: { userId: `r-${i}` } } }).then((r) => r.json())));
    const share = answers.filter((a) => a.assignments.cta === "b").length / answers.length;
    expect(share).toBeGreaterThan(0.6);
    const decisions = await loggedEvents(server.stores.events).list({ type: "decision", limit: 200 });
    for (const { event } of decisions) {
      const layer = (event.body.layers as { allocationKey: string; probability: number }[])[0]!;
      expect(layer.probability).toBe(weights[["arm-a", "arm-b", "arm-c"].indexOf(layer.allocationKey)]);
    }
  });

  it("never overwrites a bundle imported meanwhile (compare and set on the version)", async () => {
    await learnThatBWins(300);
    const newer = { ...ctaBanditBundle(), version: "2026-11-21T05:00:00.000Z" };
    const realGet = server.stores.bundles.get.bind(server.stores.bundles);
    // The operator's import lands between the publisher's read and its write.
    server.stores.bundles.get = async (p, e) => {
      const read = await realGet(p, e);
      await server.stores.bundles.put(newer, new Date(server.clock.now()).toISOString());
      return read;
    };
    expect(await publisher.publish()).toEqual([]);
    server.stores.bundles.get = realGet;
    expect((await config()).bundle).toEqual(newer);
  });
});

describe("weights publication's bounds (issue 32): a threshold, an interval, and the history", () => {
  const MINUTE = 60_000;
  /** The bundle as stored now, with these weights on the bandit (an operator's import). */
  const importWithWeights = async (weights: number[]) => {
    server.clock.advance(1000);
    const current = (await server.stores.bundles.get("proj-1", "production"))!.bundle;
    const version = new Date(server.clock.now()).toISOString();
    const policies = current.layers[0]!.policies.map((p) => ({ ...p, weights }));
    await server.putBundle({ ...current, version, layers: [{ ...current.layers[0]!, policies }] });
  };
  // After learnThatBWins(300), the learned weights are [0.135, 0.73, 0.135] (ε-greedy, floor 0.05).

  it("does not publish weights that moved by less than the threshold (0.05 by default); a lower threshold does", async () => {
    await learnThatBWins(300);
    await importWithWeights([0.15, 0.7, 0.15]); // 0.03 from the learned ones at most
    const etag = (await config()).etag;
    expect(await publisher.publish()).toEqual([]);
    expect((await config()).etag).toBe(etag);
    const finer = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now(), threshold: 0.01 });
    expect(await finer.publish()).toHaveLength(1);
  });

  it("publishes at most once per interval (10 minutes by default), each publication in the history as the learner's", async () => {
    await learnThatBWins(300);
    const [first] = await publisher.publish();
    expect(first).toBeDefined();
    expect(publisher.waiting).toBe(0);
    // The operator imports the equal split again: the weights moved, but the learner published just now.
    await importWithWeights([1 / 3, 1 / 3, 1 / 3]);
    const imported = (await config()).bundle.version;
    server.clock.advance(9 * MINUTE);
    expect(await publisher.publish()).toEqual([]);
    // Owed a pass once the interval is over (the edge's learner object sets its alarm by this).
    expect(publisher.waiting).toBe(1);
    expect((await config()).bundle.version).toBe(imported);
    server.clock.advance(MINUTE);
    const [second] = await publisher.publish();
    expect(publisher.waiting).toBe(0);
    expect(second?.version).toBe(new Date(server.clock.now()).toISOString());
    expect((await config()).bundle.version).toBe(second!.version);
    const history = await server.stores.bundles.history("proj-1", "production");
    expect(history.map((h) => [h.version, h.by])).toEqual([
      [second!.version, "learner"],
      [imported, "operator"],
      [first!.version, "learner"],
      [VERSION, "operator"],
    ]);
    expect((await server.stores.bundles.historyVersion("proj-1", "production", second!.version))?.bundle.layers[0]!.policies[0]!.weights![1]).toBeCloseTo(0.73, 6);
  });

  it("takes the interval from the history, so a restarted publisher waits too", async () => {
    await learnThatBWins(300);
    expect(await publisher.publish()).toHaveLength(1);
    await importWithWeights([1 / 3, 1 / 3, 1 / 3]);
    const restarted = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now() });
    expect(await restarted.publish()).toEqual([]);
    const unbounded = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now(), minIntervalMs: 0 });
    expect(await unbounded.publish()).toHaveLength(1);
  });
});
