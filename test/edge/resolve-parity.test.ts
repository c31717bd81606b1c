// Resolve parity between the two hosts of the app: the Worker in workerd (dist/edge/, on D1 and
// KV) answers POST /v1/resolve exactly as the Node server does, for 1,200 seeded contexts on each
// of the parity fixtures' two bundles (test/runtime/fixtures.ts), and refuses the same contexts
// with the same status and message.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import { ManualClock, nodeSha256 } from "../server/harness.js";
import { describeMismatches, findMismatches } from "../runtime/compare.js";
import { parityFixtures } from "../runtime/fixtures.js";
import { type ParityServer, type Reply, serverReplies, startParityServer } from "../runtime/server-answers.js";
import { seedEdge } from "./targets.js";

const CONTEXTS = 1_200;
// The Worker's clock is the real one: the Node server's test clock starts at the same time, and
// the feature bundle's schedules sit hours from it, so the seconds between them change nothing.
const startedAt = Date.now();
const fixtures = parityFixtures(startedAt, CONTEXTS);
let node: ParityServer;
let edge: LocalEdge;
const edgeKeys = new Map<string, string>();

beforeAll(async () => {
  [node, edge] = await Promise.all([startParityServer(fixtures, new ManualClock(startedAt)), startLocalEdge({ port: 0, host: "127.0.0.1" })]);
  const stores = await seedEdge(edge);
  for (const { name, bundle } of fixtures) {
    await stores.bundles.put(bundle, new Date().toISOString());
    const secret = generateKey("sk");
    await stores.keys.put(toKeyRecord({ key: secret, orgId: bundle.orgId, projectId: bundle.projectId, scopes: ["sdk:read"] }, nodeSha256, new Date().toISOString()));
    edgeKeys.set(name, secret);
  }
}, 120_000);
afterAll(async () => {
  await edge?.close();
  await node?.server.close();
});

const refusal = ({ status, body }: Reply) => ({ status, error: (body as { error?: { code: string; message: string } }).error });

describe.each(fixtures)("resolve on the Worker equals the Node server's: $name bundle", (fixture) => {
  it(`for ${CONTEXTS} contexts, and the refused ones`, async () => {
    const fromNode = await serverReplies(node, fixture);
    const fromEdge = await serverReplies({ server: edge, keys: edgeKeys }, fixture);
    const mismatches = findMismatches(fixture, fromNode.answers, fromEdge.answers);
    expect(mismatches.length, describeMismatches("the Worker", fixture, mismatches)).toBe(0);
    expect(fromEdge.refusals.map(refusal)).toEqual(fromNode.refusals.map(refusal));
    expect(fromNode.refusals.length).toBeGreaterThan(0);
  });
});
