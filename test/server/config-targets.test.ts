// GET /v1/config's project and env kept per request target give what Hono's c.req gives for
// that target, over real HTTP (percent-encoding, queries in every form, absolute-form targets),
// and a target seen before is answered without Hono's request object.
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { HonoRequest } from "hono/request";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AppEnv } from "../../src/server/env.js";
import { DEFAULT_ENV } from "../../src/server/request.js";
import { ConfigTargets } from "../../src/server/routes/config-targets.js";
import { exchange } from "./raw-http.js";

let server: ServerType;
let port: number;
let kept = new ConfigTargets();

beforeAll(async () => {
  const app = new Hono<AppEnv>();
  app.get("/v1/config/:projectId", (c) => {
    const ours = kept.of(c);
    return c.json({ ours, hono: { projectId: c.req.param("projectId"), env: c.req.query("env") || DEFAULT_ENV } });
  });
  await new Promise<void>((ready) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      port = info.port;
      ready();
    });
  });
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

/** One GET of exactly this request target and Host; the answer's body, or its status line when not 200. */
async function get(target: string, host = "127.0.0.1"): Promise<unknown> {
  const { head, body } = await exchange(port, `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  return head.startsWith("HTTP/1.1 200") ? JSON.parse(body) : head.split("\r\n")[0];
}

const TARGETS = [
  "/v1/config/demo",
  "/v1/config/demo?env=staging",
  "/v1/config/demo?other=1&env=staging&env=prod",
  "/v1/config/demo?env=",
  "/v1/config/demo?env",
  "/v1/config/demo?envx=1",
  "/v1/config/demo?env=st%61ging+x",
  "/v1/config/d%65mo",
  "/v1/config/a%2Fb?env=e%26f",
  "/v1/config/it's?env=it's#frag",
  "/v1/config/x%25y",
  "/v1/config/a/../demo?env=up",
  "/v1/config/%E2%82%AC",
  "http://other.test/v1/config/absolute?env=abs",
];

describe("config targets", () => {
  for (const target of TARGETS) {
    it(`read as Hono reads them, first and again: ${target}`, async () => {
      for (const host of ["127.0.0.1", "LOCALHOST"]) {
        const answer = (await get(target, host)) as { ours: unknown; hono: unknown };
        expect(answer.ours).toEqual(answer.hono);
        expect(await get(target, host)).toEqual(answer);
      }
    });
  }

  it("a target seen before is read without Hono's request object", async () => {
    kept = new ConfigTargets();
    await get("/v1/config/seen?env=staging");
    const param = vi.spyOn(HonoRequest.prototype, "param");
    const query = vi.spyOn(HonoRequest.prototype, "query");
    try {
      const answer = (await get("/v1/config/seen?env=staging")) as { ours: unknown };
      expect(answer.ours).toEqual({ projectId: "seen", env: "staging" });
      // The route's own Hono read (the "hono" half of the answer) is the only one.
      expect(param).toHaveBeenCalledTimes(1);
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("stays right past the number of targets it keeps", async () => {
    kept = new ConfigTargets();
    for (let i = 0; i < 1100; i += 1) expect(((await get(`/v1/config/p${i}?env=e${i}`)) as { ours: unknown }).ours).toEqual({ projectId: `p${i}`, env: `e${i}` });
    expect(((await get("/v1/config/p3?env=e3")) as { ours: unknown }).ours).toEqual({ projectId: "p3", env: "e3" });
  });
});
