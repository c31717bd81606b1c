// Parity in Node: the built client's local resolve (bootstrapped with the bundle, on the
// server's clock) gives the server's POST /v1/resolve answer for 10,000 contexts per bundle,
// with each engine build; contexts the server refuses (400) it refuses with the same message.
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { START } from "../server/harness.js";
import { builtClientDir, importBuiltClient } from "./client-build.js";
import { describeMismatches, findMismatches, findRefusalMismatches } from "./compare.js";
import { eventSink } from "./event-sink.js";
import { parityFixtures } from "./fixtures.js";
import { type ParityServer, type ServerReplies, serverReplies, startParityServer } from "./server-answers.js";

const fixtures = parityFixtures(START);
const createClient = await importBuiltClient();
const clientDir = pathToFileURL(builtClientDir());
let reference: ParityServer;
const replies = new Map<string, ServerReplies>();

beforeAll(async () => {
  reference = await startParityServer(fixtures);
  for (const fixture of fixtures) replies.set(fixture.name, await serverReplies(reference, fixture));
}, 180_000);
afterAll(() => reference?.server.close());

describe.each(fixtures)("Node parity: $name bundle", (fixture) => {
  it.each(["vane.wasm", "vane-scalar.wasm"])("the local resolve with %s equals the server's for every context", async (wasm) => {
    const sink = eventSink();
    const client = await createClient({
      baseUrl: reference.server.url,
      apiKey: reference.keys.get(fixture.name),
      projectId: fixture.bundle.projectId,
      bootstrap: fixture.bundle,
      wasm: new URL(wasm, clientDir),
      now: () => reference.server.clock.now(),
      fetch: sink.fetch,
    });
    const local = fixture.cases.map(({ context, parameters }) => client.resolveLocal(context, parameters && [...parameters]));
    const refusals = fixture.refused.map((context) => errorOf(() => client.resolveLocal(context)));
    await client.close();
    const { answers, refusals: serverRefusals } = replies.get(fixture.name)!;
    const mismatches = [...findMismatches(fixture, answers, local), ...findRefusalMismatches(fixture, serverRefusals, refusals)];
    expect(mismatches.length, describeMismatches(`Node (${wasm})`, fixture, mismatches)).toBe(0);
    expect(fixture.refused.length).toBeGreaterThan(0);
    expect(sink.otherRequests).toEqual([]); // bootstrapped: no config request
    expect(sink.events()).toBeGreaterThan(0); // exposures left through the client's fetch
  });
});

/** The message `run` throws, or null when it returns. */
function errorOf(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
