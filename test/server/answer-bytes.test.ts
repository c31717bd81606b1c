// The routes' answers reach @hono/node-server as bytes on Node (answer.ts bytesOf): Node
// prepends its header block to a string body and flattens the two on the socket write, a second
// copy of every answer. Over real HTTP the answer is the same text, its Content-Length its UTF-8
// length, whatever characters the context brought in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, startTestServer } from "./harness.js";

let server: TestServer;
let key: string;
/** The bodies the app handed the adapter, by request id. */
const handed = new Map<string, unknown>();

beforeAll(async () => {
  // Read from the adapter's cache: reading response.headers would turn the fast Response into a full one.
  server = await startTestServer({ answered: (response) => void handed.set(String(cached(response)?.[2]["X-Request-Id"]), cached(response)?.[1]) });
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

/** @hono/node-server's lightweight Response keeps [status, body, headers] under a symbol (answer.ts gives a header record). */
function cached(response: Response): [number, unknown, Record<string, string>] | undefined {
  const cache = Object.getOwnPropertySymbols(response).find((symbol) => symbol.description === "cache");
  return cache === undefined ? undefined : (response as unknown as Record<symbol, [number, unknown, Record<string, string>]>)[cache];
}

/** Two-, three- and four-byte characters, and an escaped control character. */
const USER = "ü-用户-😀-\u0007";

const CASES = [
  { name: "resolve", path: "/v1/resolve", body: { context: { userId: USER, country: "ÖS" } } },
  { name: "OFREP bulk", path: "/ofrep/v1/evaluate/flags", body: { context: { targetingKey: USER, country: "ÖS" } } },
  { name: "decide", path: "/v1/decide/discount-bandit", body: { context: { userId: USER, country: "ÖS" } } },
  { name: "config", path: "/v1/config/proj-1", body: undefined },
];

describe("answers as bytes", () => {
  it.each(CASES)("$name: handed over as bytes; the same JSON over HTTP with its UTF-8 length", async ({ path, body }) => {
    const response = await call(server, path, { key, body });
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(Number(response.headers.get("Content-Length"))).toBe(bytes.length);
    const answer = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
    if (path === "/v1/resolve") expect((answer.metadata as { unitKeyValue: string }).unitKeyValue).toBe(USER);
    if (path.startsWith("/v1/decide")) expect(JSON.stringify(answer)).toContain('"ÖS"');
    expect(handed.get(response.headers.get("X-Request-Id")!)).toBeInstanceOf(Uint8Array);
  });

  it("an error answer too, with its message's characters", async () => {
    const response = await call(server, "/v1/resolve", { key, body: { context: { userId: USER }, env: "prøduction" } });
    expect(response.status).toBe(404);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(Number(response.headers.get("Content-Length"))).toBe(bytes.length);
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual({ error: { code: "NOT_FOUND", message: "Bundle not found for proj-1/prøduction" } });
    expect(handed.get(response.headers.get("X-Request-Id")!)).toBeInstanceOf(Uint8Array);
  });
});
