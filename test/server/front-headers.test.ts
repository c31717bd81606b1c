// The front door's headers read from Node's rawHeaders in one pass give what Hono's
// c.req.header gives for each of its names, over real HTTP with the header lists a client may
// send: any case, repeats, surrounding spaces, names of the same length as a wanted one.
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/server/env.js";
import { type FrontHeader, headerIn, readFrontHeaders } from "../../src/server/middleware/front-headers.js";
import { exchange } from "./raw-http.js";

const NAMES: readonly FrontHeader[] = ["authorization", "content-length", "if-none-match", "transfer-encoding", "x-org-id", "x-project-id", "x-request-id", "content-type"];

let server: ServerType;
let port: number;

beforeAll(async () => {
  const app = new Hono<AppEnv>();
  app.all("*", (c) => {
    const front = readFrontHeaders(c);
    const ours = Object.fromEntries(NAMES.map((name) => [name, headerIn(front, c, name) ?? null]));
    const hono = Object.fromEntries(NAMES.map((name) => [name, c.req.header(name) ?? null]));
    return c.json({ fromRaw: front !== undefined, ours, hono });
  });
  await new Promise<void>((ready) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      port = info.port;
      ready();
    });
  });
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

/** One request with exactly these header lines; its JSON answer. */
async function send(lines: readonly string[], body = ""): Promise<{ fromRaw: boolean; ours: Record<string, string | null>; hono: Record<string, string | null> }> {
  const answer = await exchange(port, ["POST /v1/config/p HTTP/1.1", "Host: 127.0.0.1", "Connection: close", ...lines, "", body].join("\r\n"));
  if (!answer.head.startsWith("HTTP/1.1 200")) throw new Error(answer.head);
  const rest = answer.body;
  // The JSON answer may come chunked: its one chunk sits between the size line and the end.
  return JSON.parse(/transfer-encoding: chunked/i.test(answer.head) ? rest.slice(rest.indexOf("\r\n") + 2, rest.lastIndexOf("\r\n0\r\n")) : rest);
}

const CASES: readonly (readonly [name: string, lines: readonly string[]])[] = [
  ["lower-case names", ["authorization: Bearer vane_sk_abc", "if-none-match: \"v1\"", "x-request-id: r-1", "x-org-id: o", "x-project-id: p", "content-length: 0", "content-type: application/json"]],
  ["capitalized and upper-case names", ["Authorization: Bearer vane_sk_abc", "IF-NONE-MATCH: \"v1\"", "X-Request-ID: r-1", "X-Org-Id: o", "X-PROJECT-ID: p", "Content-Length: 0", "CONTENT-Type: text/plain; charset=utf-8"]],
  ["repeats, joined as Fetch joins them", ["Authorization: Bearer a", "authorization: Bearer b", "If-None-Match: \"v1\"", "if-none-match: \"v2\"", "X-Request-Id: a", "x-request-id: b", "X-Org-Id: o1", "X-Org-Id: o2", "Content-Length: 0", "Content-Type: application/json", "content-type: text/plain"]],
  ["values with spaces around them", ["Authorization:    Bearer vane_sk_abc   ", "If-None-Match:\t\"v1\" ", "X-Project-Id:  p  ", "Content-Length: 0"]],
  ["empty values", ["Authorization:", "X-Request-Id: ", "Content-Length: 0"]],
  ["names of a wanted name's length that are not it", ["Cache-Control: no-cache", "Accept-Charset: utf-8", "X-Other-Id: z", "X-Whatever-Id: z", "Content-Xype: z", "Accept-Range: z", "Content-Length: 0"]],
  ["a chunked body", ["Authorization: Bearer k", "Transfer-Encoding: chunked"]],
  ["none of them", ["Content-Length: 0"]],
];

describe("the front door's headers", () => {
  for (const [name, lines] of CASES) {
    it(`read from rawHeaders equal Hono's: ${name}`, async () => {
      const body = lines.some((line) => /^transfer-encoding/i.test(line)) ? "0\r\n\r\n" : "";
      const answer = await send(lines, body);
      expect(answer.fromRaw).toBe(true);
      expect(answer.ours).toEqual(answer.hono);
    });
  }

  it("repeats are joined in order, and a wanted name's look-alike is not taken for it", async () => {
    const repeated = await send(["Authorization: Bearer a", "AUTHORIZATION: Bearer b", "Content-Length: 0"]);
    expect(repeated.ours.authorization).toBe("Bearer a, Bearer b");
    const lookalike = await send(["Cache-Control: x", "X-Other-Id: y", "Content-Length: 0"]);
    expect(lookalike.ours["if-none-match"]).toBeNull();
    expect(lookalike.ours["x-org-id"]).toBeNull();
  });

  it("gives up the one pass for a value Fetch would refuse (NUL, CR, LF: a lenient parser lets them in)", () => {
    const read = (value: string) => readFrontHeaders({ env: { incoming: { rawHeaders: ["Host", "h", "Authorization", value] } } } as never);
    expect(read("Bearer vane_sk_x")).toEqual(["Bearer vane_sk_x", undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
    for (const bad of ["Bearer a\0b", "Bearer a\rb", "Bearer a\nb"]) expect(read(bad)).toBeUndefined();
  });

  it("is read through Hono where there are no rawHeaders (app.request, a Worker)", async () => {
    const app = new Hono<AppEnv>();
    app.get("/", (c) => c.json({ fromRaw: readFrontHeaders(c) !== undefined, id: headerIn(readFrontHeaders(c), c, "x-request-id") ?? null }));
    const answer = (await (await app.request("/", { headers: { "X-Request-Id": "r-9" } })).json()) as { fromRaw: boolean; id: string };
    expect(answer).toEqual({ fromRaw: false, id: "r-9" });
  });
});
