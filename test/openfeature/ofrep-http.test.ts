// The OFREP endpoints over real HTTP on a bundle drawn for this run: values equal POST /v1/resolve
// for the same context; variant, reason and metadata say which allocation and why; one decision
// event per call; ETag and 304; every error code where the spec puts it; tenancy; and the event
// stream telling a listener of a new bundle version. The same checks on both hosts of the app: the
// Node server and the Worker in workerd (test/edge/targets.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretHash } from "../../src/server/auth/api-key.js";
import { call, nodeSha256 } from "../server/harness.js";
import { type ContractTarget, TARGETS, startTarget } from "../edge/targets.js";
import { GENERATED_ORG, GENERATED_PROJECT, asVaneContext, generatedBundle, laterVersion, openFeatureContexts, seedOfRun } from "./generated-bundle.js";
import { type ResolveAnswer, expectedDetails, onTheWire } from "./of-helpers.js";
import { ofrepProblems } from "./ofrep-schema.js";
import { openSse, waitFor } from "./sse-reader.js";
import { loggedEvents } from "../store/logged-events.js";

interface Flag {
  key: string;
  value?: unknown;
  reason?: string;
  variant?: string;
  metadata?: Record<string, unknown>;
  errorCode?: string;
  errorDetails?: string;
}
interface Bulk {
  flags: Flag[];
  metadata: Record<string, unknown>;
  eventStreams: { type: string; endpoint: { requestUri: string }; inactivityDelaySec: number }[];
}

const seed = seedOfRun();
const bundle = generatedBundle(seed);
const contexts = openFeatureContexts(seed, 120);
const about = `seed ${seed}`;
describe.each(TARGETS)("OFREP over HTTP on %s", (target) => {
  let server: ContractTarget;
  let sk: string;
  let pk: string;
  let orgKey: string;
  let otherOrg: string;

  beforeAll(async () => {
    server = await startTarget(target);
    await server.putBundle(bundle);
    await server.putBundle({ ...generatedBundle(seed + 1), orgId: "other-org", projectId: "other-shop" });
    sk = await server.key({ orgId: GENERATED_ORG, projectId: GENERATED_PROJECT, scopes: ["sdk:read"] });
    pk = await server.key({ kind: "pk", orgId: GENERATED_ORG, projectId: GENERATED_PROJECT, scopes: ["sdk:read"] });
    orgKey = await server.key({ orgId: GENERATED_ORG, scopes: ["sdk:read"] });
    otherOrg = await server.key({ orgId: "other-org", scopes: ["sdk:read"] });
  });
  afterAll(() => server.close());

  const single = (flag: string, body: unknown, key = sk, headers?: Record<string, string>) =>
    call(server, `/ofrep/v1/evaluate/flags/${encodeURIComponent(flag)}`, { key, body, headers });
  const bulk = (body: unknown, key = sk, headers?: Record<string, string>) => call(server, "/ofrep/v1/evaluate/flags", { key, body, headers });

  async function resolved(context: Record<string, unknown>): Promise<ResolveAnswer> {
    const response = await call(server, "/v1/resolve", { key: sk, body: { context: asVaneContext(context) } });
    expect(response.status, about).toBe(200);
    return (await response.json()) as ResolveAnswer;
  }

  const decisions = async () => (await loggedEvents(server.stores.events).list({ type: "decision", limit: 100_000 })).map((e) => e.event);
  const stored = (ids: readonly unknown[]) => async () => {
    const all = await decisions();
    return ids.every((id) => all.some((e) => e.decisionId === id));
  };

  /** A single-flag call's decision, once stored: events reach the edge's D1 in order (a queue), so all sent before it are stored too. */
  async function marker(unit: string): Promise<void> {
    const answer = (await (await single(bundle.parameters[0]!.key, { context: { targetingKey: unit } })).json()) as Flag;
    await waitFor(stored([answer.metadata!.decisionId]), `the decision of ${unit} stored`, { everyMs: 100 });
  }

  function withoutDecision(flag: Flag): Flag {
    const { decisionId, ...metadata } = flag.metadata ?? {};
    expect(decisionId, about).toMatch(/^[0-9a-f-]{36}$/);
    return { ...flag, metadata };
  }

  describe("OFREP evaluation agrees with /v1/resolve", () => {
    it("bulk: every parameter is a flag with /v1/resolve's value, its allocation key as variant, and why", async () => {
      for (const context of contexts) {
        const response = await bulk({ context });
        expect(response.status, about).toBe(200);
        expect(response.headers.get("ETag")).toMatch(/^W\/"[0-9a-f]{16}"$/);
        const body = (await response.json()) as Bulk;
        expect(ofrepProblems("bulkEvaluationSuccess", body), about).toEqual([]);
        const answer = await resolved(context);
        expect(body.flags.map((f) => f.key)).toEqual(bundle.parameters.map((p) => p.key));
        for (const flag of body.flags) expect(withoutDecision(flag), `${about}, ${flag.key} for ${JSON.stringify(context)}`).toEqual({ key: flag.key, ...onTheWire(expectedDetails(bundle, flag.key, answer)) });
        expect(new Set(body.flags.map((f) => f.metadata!.decisionId))).toEqual(new Set([body.metadata.decisionId]));
        expect(body.metadata.configVersion).toBe(bundle.version);
      }
    });

    it("single flag: the same value, variant, reason and metadata", async () => {
      for (const [i, context] of contexts.slice(0, 60).entries()) {
        const flag = bundle.parameters[i % bundle.parameters.length]!.key;
        const response = await single(flag, { context });
        expect(response.status, about).toBe(200);
        const body = (await response.json()) as Flag;
        expect(ofrepProblems("serverEvaluationSuccess", body), about).toEqual([]);
        expect(withoutDecision(body), `${about}, ${flag}`).toEqual({ key: flag, ...onTheWire(expectedDetails(bundle, flag, await resolved(context))) });
      }
    });

    it("both reasons and STATIC (a parameter's default) turn up on this bundle's flags", async () => {
      const reasons = new Set<string>();
      for (const context of contexts) {
        const body = (await (await bulk({ context })).json()) as Bulk;
        for (const flag of body.flags) reasons.add(flag.reason!);
      }
      expect(reasons.has("STATIC"), about).toBe(true);
      expect(reasons.has("DEFAULT"), about).toBe(false); // not in OFREP's enum
      expect(reasons.has("SPLIT") || reasons.has("TARGETING_MATCH"), about).toBe(true);
    });
  });

  describe("OFREP decisions and caching", () => {
    it("records one decision event per single-flag call and one per bulk call, under the answer's decisionId", async () => {
      const flag = bundle.parameters[0]!.key;
      const one = (await (await single(flag, { context: { targetingKey: "u-dec-1" } })).json()) as Flag;
      const all = (await (await bulk({ context: { targetingKey: "u-dec-2" } })).json()) as Bulk;
      await waitFor(stored([one.metadata!.decisionId, all.metadata.decisionId]), "both calls' decisions stored", { everyMs: 100 });
      // One each, under the answer's decisionId; targetingKey became the unit.
      const ofTheseUnits = (await decisions()).filter((e) => e.unitKey === "u-dec-1" || e.unitKey === "u-dec-2").map((e) => [e.unitKey, e.decisionId]);
      expect(ofTheseUnits.sort()).toEqual([["u-dec-1", one.metadata!.decisionId], ["u-dec-2", all.metadata.decisionId]]);
    });

    it("bulk: If-None-Match with the ETag of the same context gives 304; a new bundle version a 200", async () => {
      const context = { targetingKey: "etag-user", plan: "gold", country: "US" };
      const first = await bulk({ context });
      const etag = first.headers.get("ETag")!;
      const again = await bulk({ context }, sk, { "If-None-Match": etag });
      expect(again.status).toBe(304);
      expect(again.headers.get("ETag")).toBe(etag);
      expect(await again.text()).toBe("");
      const flipped = structuredClone(bundle);
      flipped.version = laterVersion(bundle.version, 1);
      const flag = flipped.parameters[0]!;
      const changedValue = { boolean: !flag.default, string: "changed", number: Number(flag.default) + 1, integer: Number(flag.default) + 1, json: { changed: true } };
      flag.default = changedValue[flag.type];
      for (const layer of flipped.layers) layer.policies = [];
      await server.putBundle(flipped);
      try {
        const changed = await bulk({ context }, sk, { "If-None-Match": etag });
        expect(changed.status).toBe(200);
        expect(changed.headers.get("ETag")).not.toBe(etag);
      } finally {
        await server.putBundle({ ...bundle, version: laterVersion(bundle.version, 2) });
      }
    });
  });

  describe("OFREP errors and access", () => {
    const flag = () => bundle.parameters[0]!.key;

    it("FLAG_NOT_FOUND (404) for a key that is no parameter", async () => {
      const response = await single("no.such.flag", { context: { targetingKey: "u" } });
      expect(response.status).toBe(404);
      const body = await response.json();
      expect(ofrepProblems("flagNotFound", body)).toEqual([]);
      expect(body).toEqual({ key: "no.such.flag", errorCode: "FLAG_NOT_FOUND", errorDetails: "Flag 'no.such.flag' was not found" });
    });

    it("PARSE_ERROR (400) for a body that is not JSON, single and bulk", async () => {
      const one = await single(flag(), "{not json");
      expect(one.status).toBe(400);
      const oneBody = await one.json();
      expect(ofrepProblems("evaluationFailure", oneBody)).toEqual([]);
      expect(oneBody).toMatchObject({ key: flag(), errorCode: "PARSE_ERROR" });
      const all = await bulk("{not json");
      expect(all.status).toBe(400);
      const allBody = await all.json();
      expect(ofrepProblems("bulkEvaluationFailure", allBody)).toEqual([]);
      expect(allBody).toMatchObject({ errorCode: "PARSE_ERROR" });
    });

    it("INVALID_CONTEXT (400) for no context and for a unit no unit can have", async () => {
      for (const body of [{}, { context: "u" }, { context: { userId: true } }, { context: { targetingKey: ["a"] } }]) {
        const one = await single(flag(), body);
        expect(one.status, JSON.stringify(body)).toBe(400);
        expect(await one.json()).toMatchObject({ key: flag(), errorCode: "INVALID_CONTEXT" });
        const all = await bulk(body);
        expect(all.status).toBe(400);
        expect(await all.json()).toMatchObject({ errorCode: "INVALID_CONTEXT" });
      }
    });

    it("no failed evaluation records a decision", async () => {
      await marker("u-before-failures");
      const before = await loggedEvents(server.stores.events).count({ type: "decision" });
      await single("no.such.flag", { context: { targetingKey: "u" } });
      await single(flag(), "{x");
      await bulk({ context: { userId: {} } });
      await marker("u-after-failures");
      expect(await loggedEvents(server.stores.events).count({ type: "decision" })).toBe(before + 1); // the marker's alone
    });

    it("single flag needs a server-side key; bulk takes a publishable one", async () => {
      const one = await single(flag(), { context: { targetingKey: "u" } }, pk);
      expect(one.status).toBe(403);
      expect(((await one.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
      expect((await bulk({ context: { targetingKey: "u" } }, pk)).status).toBe(200);
    });

    it("401 without a key; organization keys name their project with X-Project-Id", async () => {
      expect((await call(server, "/ofrep/v1/evaluate/flags", { body: { context: {} } })).status).toBe(401);
      expect((await bulk({ context: {} }, orgKey)).status).toBe(400);
      expect((await bulk({ context: {} }, orgKey, { "X-Project-Id": GENERATED_PROJECT })).status).toBe(200);
      expect((await single(flag(), { context: {} }, orgKey, { "X-Project-Id": GENERATED_PROJECT })).status).toBe(200);
    });

    it("bulk: a body that is not JSON is PARSE_ERROR, an env without a bundle NOT_FOUND naming project and env", async () => {
      const notJson = await call(server, "/ofrep/v1/evaluate/flags", { key: sk, body: "{not json" });
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toMatchObject({ errorCode: "PARSE_ERROR" });
      const noBundle = await bulk({ context: { targetingKey: "u" } }, sk, { "X-Env": "nope" });
      expect(noBundle.status).toBe(404);
      expect(await noBundle.json()).toEqual({ error: { code: "NOT_FOUND", message: `Bundle not found for ${GENERATED_PROJECT}/nope` } });
    });

    it("quotes a long env or project of the caller's cut to 100 characters, as every message does", async () => {
      const long = (c: string) => c.repeat(300);
      const cut = (c: string) => `${c.repeat(100)}… (300 characters)`;
      const noBundle = await bulk({ context: { targetingKey: "u" } }, sk, { "X-Env": long("e") });
      expect(await noBundle.json()).toEqual({ error: { code: "NOT_FOUND", message: `Bundle not found for ${GENERATED_PROJECT}/${cut("e")}` } });
      const streamEnv = await call(server, `/ofrep/v1/changes/${GENERATED_PROJECT}?env=${long("e")}`, { key: sk });
      expect(await streamEnv.json()).toEqual({ error: { code: "NOT_FOUND", message: `Bundle not found for ${GENERATED_PROJECT}/${cut("e")}` } });
      const streamProject = await call(server, `/ofrep/v1/changes/${long("p")}`, { key: sk });
      expect(await streamProject.json()).toEqual({ error: { code: "FORBIDDEN", message: `API key is not valid for project ${cut("p")}` } });
    });

    it("another tenant's key never learns that a flag exists", async () => {
      const existing = await single(flag(), { context: { targetingKey: "u" } }, otherOrg, { "X-Project-Id": GENERATED_PROJECT });
      const missing = await single("no.such.flag", { context: { targetingKey: "u" } }, otherOrg, { "X-Project-Id": GENERATED_PROJECT });
      expect(existing.status).toBe(404);
      expect(((await existing.json()) as Flag).errorCode).toBe("FLAG_NOT_FOUND");
      expect(missing.status).toBe(404);
      const all = await bulk({ context: {} }, otherOrg, { "X-Project-Id": GENERATED_PROJECT });
      expect(all.status).toBe(404);
      expect(JSON.stringify(await all.json())).not.toContain(bundle.parameters[0]!.key);
    });
  });

  describe("OFREP event stream", () => {
    it("the bulk answer's stream tells its listener of a new bundle version", async () => {
      const body = (await (await bulk({ context: { targetingKey: "sse-user" } }, pk)).json()) as Bulk;
      const [stream] = body.eventStreams;
      expect(stream).toMatchObject({ type: "sse", inactivityDelaySec: 120 });
      expect(stream!.endpoint.requestUri).toMatch(new RegExp(`^/ofrep/v1/changes/${GENERATED_PROJECT}\\?env=production&token=`));
      const reader = await openSse(server.url + stream!.endpoint.requestUri);
      try {
        expect(reader.status).toBe(200);
        expect(reader.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
        await waitFor(() => reader.raw.length > 0, "the retry hint");
        expect(reader.raw[0]).toBe("retry: 2000");
        const version = laterVersion(bundle.version, 3);
        await server.putBundle({ ...bundle, version });
        await waitFor(() => reader.messages.length > 0, "a change notification");
        const message = reader.messages[0]!;
        expect(message.id).toBe(version);
        expect(message.event).toBe("message");
        expect(JSON.parse(message.data)).toMatchObject({ type: "refetchEvaluation", etag: `"${version}"` });
        expect(ofrepProblems("sseEventData", JSON.parse(message.data))).toEqual([]);
      } finally {
        reader.close();
      }
    });

    it("a listener with Authorization needs no token; Last-Event-ID of an older version is told at once", async () => {
      const reader = await openSse(`${server.url}/ofrep/v1/changes/${GENERATED_PROJECT}?env=production`, { Authorization: `Bearer ${sk}`, "Last-Event-ID": "some-old-version" });
      try {
        expect(reader.status).toBe(200);
        await waitFor(() => reader.messages.length > 0, "the missed change");
        expect(JSON.parse(reader.messages[0]!.data).type).toBe("refetchEvaluation");
      } finally {
        reader.close();
      }
    });

    it("refuses a forged token, another project's token, and a revoked key's token", async () => {
      const body = (await (await bulk({ context: {} }, pk)).json()) as Bulk;
      const uri = body.eventStreams[0]!.endpoint.requestUri;
      const forged = uri.replace(/token=([^.]+)\.(.)/, (_, payload: string, c: string) => `token=${payload}.${c === "A" ? "B" : "A"}`);
      expect((await openSse(server.url + forged)).status).toBe(401);
      expect((await openSse(server.url + uri.replace(`/changes/${GENERATED_PROJECT}`, "/changes/other-shop"))).status).toBe(403);
      expect((await openSse(server.url + uri.replace("env=production", "env=staging"))).status).toBe(403);
      expect((await openSse(`${server.url}/ofrep/v1/changes/${GENERATED_PROJECT}`)).status).toBe(401);
      const revoked = await server.key({ kind: "pk", orgId: GENERATED_ORG, projectId: GENERATED_PROJECT, scopes: ["sdk:read"] });
      const own = (await (await bulk({ context: {} }, revoked)).json()) as Bulk;
      const ownUri = server.url + own.eventStreams[0]!.endpoint.requestUri;
      const open = await openSse(ownUri);
      expect(open.status).toBe(200);
      open.close();
      const record = (await server.stores.keys.byHash(secretHash(revoked, nodeSha256)))!;
      await server.stores.keys.put({ ...record, revokedAt: new Date(server.now() - 1000).toISOString() });
      expect((await openSse(ownUri)).status).toBe(401);
    });
  });
});
