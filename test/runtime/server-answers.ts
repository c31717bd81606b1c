// The reference side of parity: a real Vane server (test/server/harness.ts: 127.0.0.1, SQLite,
// a manual clock) holding both fixture bundles, and its POST /v1/resolve answers for every case,
// posted over keep-alive connections a few at a time. node:http rather than fetch: the client
// shares the test's process with the server, and fetch's per-request cost halved the rate.
import { Agent, request } from "node:http";
import { type ManualClock, type TestServer, startTestServer } from "../server/harness.js";
import type { ParityCase, ParityFixture } from "./fixtures.js";

/** Requests in flight at once: enough to keep the server busy, few enough not to queue. */
const CONCURRENCY = 16;

export interface ParityServer {
  readonly server: TestServer;
  /** A server-side key (sdk:read) for each fixture's project. */
  readonly keys: ReadonlyMap<string, string>;
}

/** An HTTP status and its parsed JSON body. */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
}

/** What the server answered a fixture: a 200 body per case, and its reply to each refused context. */
export interface ServerReplies {
  readonly answers: unknown[];
  readonly refusals: Reply[];
}

export async function startParityServer(fixtures: readonly ParityFixture[], clock?: ManualClock): Promise<ParityServer> {
  // Keys and bundles are written before the first request, so the server may cache them for the run.
  const server = await startTestServer({ limits: { keyCacheMs: 60_000, bundleRefreshMs: 60_000 }, clock });
  const keys = new Map<string, string>();
  for (const { name, bundle } of fixtures) {
    await server.putBundle(bundle);
    keys.set(name, await server.key({ kind: "sk", orgId: bundle.orgId, projectId: bundle.projectId, scopes: ["sdk:read"] }));
  }
  return { server, keys };
}

/** Where replies come from: any server of the API (the Worker too) with a key per fixture. */
export type ReplySource = { readonly server: { readonly url: string }; readonly keys: ReadonlyMap<string, string> };

export async function serverReplies(parity: ReplySource, fixture: ParityFixture): Promise<ServerReplies> {
  // Connections of its own, closed after: a server may close a connection idle since an earlier run (workerd does within seconds).
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    return { answers: await serverAnswers(parity, fixture, agent), refusals: await serverRefusals(parity, fixture, agent) };
  } finally {
    agent.destroy();
  }
}

/** The server's 200 body for each case, in the cases' order; any other status fails the run. */
async function serverAnswers(parity: ReplySource, fixture: ParityFixture, agent: Agent): Promise<unknown[]> {
  const key = parity.keys.get(fixture.name)!;
  return mapConcurrently(fixture.cases, async (item: ParityCase, index) => {
    const { status, body } = await postResolve(parity.server.url, key, item, agent);
    if (status !== 200) throw new Error(`${fixture.name} case ${index}: ${status} ${JSON.stringify(body)}`);
    return body;
  });
}

/** The server's reply to each refused context. */
function serverRefusals(parity: ReplySource, fixture: ParityFixture, agent: Agent): Promise<Reply[]> {
  const key = parity.keys.get(fixture.name)!;
  return mapConcurrently(fixture.refused, (context) => postResolve(parity.server.url, key, { context }, agent));
}

/** POST /v1/resolve with a Bearer key; the status and the parsed body. */
function postResolve(baseUrl: string, key: string, body: unknown, agent: Agent): Promise<Reply> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) };
    const req = request(`${baseUrl}/v1/resolve`, { method: "POST", agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function mapConcurrently<T, R>(items: readonly T[], task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}
