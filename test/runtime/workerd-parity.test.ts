// Parity in workerd (miniflare): a worker built from the client's file, with the engine imported
// as a WebAssembly.Module, answers local resolutions for the cases posted to it; they equal the
// server's POST /v1/resolve answers for 10,000 contexts per bundle; contexts the server refuses
// (400) it refuses with the same message.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { START } from "../server/harness.js";
import { builtClientDir } from "./client-build.js";
import { describeMismatches, findMismatches, findRefusalMismatches } from "./compare.js";
import { type ParityFixture, parityFixtures } from "./fixtures.js";
import { type ParityServer, type ServerReplies, serverReplies, startParityServer } from "./server-answers.js";

const CHUNK = 1000;
const COMPATIBILITY_DATE = "2026-04-26"; // the workerd that miniflare 4.20260426 ships
const fixtures = parityFixtures(START);
let reference: ParityServer;
let worker: Miniflare;
const replies = new Map<string, ServerReplies>();

interface WorkerAnswer {
  answers: unknown[];
  /** The message each refused context's local resolve threw, or null. */
  refusals: (string | null)[];
  events: number;
  engineIsModule: boolean;
  otherRequests: string[];
}

beforeAll(async () => {
  const client = builtClientDir();
  worker = new Miniflare({
    compatibilityDate: COMPATIBILITY_DATE,
    modules: [
      { type: "ESModule", path: "parity/worker.js", contents: readFileSync(fileURLToPath(new URL("worker/parity-worker.js", import.meta.url))) },
      { type: "ESModule", path: "parity/vane-client.js", contents: readFileSync(`${client}vane-client.js`) },
      { type: "CompiledWasm", path: "parity/vane.wasm", contents: readFileSync(`${client}vane.wasm`) },
    ],
  });
  [reference] = await Promise.all([startParityServer(fixtures), worker.ready]);
  for (const fixture of fixtures) replies.set(fixture.name, await serverReplies(reference, fixture));
}, 180_000);
afterAll(async () => {
  await worker?.dispose();
  await reference?.server.close();
});

describe.each(fixtures)("workerd parity: $name bundle", (fixture) => {
  it("the worker's local resolve equals the server's for every context", async () => {
    const local: unknown[] = [];
    for (let i = 0; i < fixture.cases.length; i += CHUNK) {
      const reply = await resolveInWorker(fixture, { cases: fixture.cases.slice(i, i + CHUNK), refused: [] });
      expect(reply.engineIsModule).toBe(true);
      expect(reply.otherRequests).toEqual([]); // bootstrapped: no config request
      expect(reply.events).toBeGreaterThan(0); // exposures left through the client's fetch
      local.push(...reply.answers);
    }
    const { refusals } = await resolveInWorker(fixture, { cases: [], refused: fixture.refused });
    const { answers, refusals: serverRefusals } = replies.get(fixture.name)!;
    const mismatches = [...findMismatches(fixture, answers, local), ...findRefusalMismatches(fixture, serverRefusals, refusals)];
    expect(mismatches.length, describeMismatches("workerd", fixture, mismatches)).toBe(0);
  });
});

async function resolveInWorker(fixture: ParityFixture, work: Pick<ParityFixture, "cases" | "refused">): Promise<WorkerAnswer> {
  const body = JSON.stringify({ bundle: fixture.bundle, nowMs: reference.server.clock.now(), apiKey: reference.keys.get(fixture.name), ...work });
  const response = await worker.dispatchFetch("http://parity.test/resolve", { method: "POST", body });
  if (response.status !== 200) throw new Error(`worker answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as WorkerAnswer;
}
