// The requests of each scenario. Resolve contexts vary per request (a random user, account and
// country each time, so buckets, the pricing targeting and the decision events vary); event
// batches are 100 valid events, half exposures and half track events of three kinds (a
// schema-checked purchase, a signup, and an undefined name that is counted as discovered), built
// once into a pool of bodies that requests pick from at random. OFREP's scenarios send the
// resolve scenario's contexts with the user as targetingKey.
import type { RequestSpec } from "autocannon";
import type { Scenario } from "../harness/load.js";

/** The decide scenario's policy, seeded by seed.ts. */
export const BENCH_POLICY = "bench-recs";

export const EVENTS_PER_BATCH = 100;
const USERS = 1_000_000;
const ACCOUNTS = 50_000;
const COUNTRIES = ["US", "CA", "GB", "DE", "FR", "JP", "BR", "IN"] as const;
const BATCH_POOL = 64;

const pick = (n: number): number => Math.floor(Math.random() * n);

/** A fresh resolve body per request: `{"context":{"userId","accountId","country"}}`. */
export function resolveBody(): string {
  const context = { userId: `user-${pick(USERS)}`, accountId: `acct-${pick(ACCOUNTS)}`, country: COUNTRIES[pick(COUNTRIES.length)] };
  return JSON.stringify({ context });
}

/** A JSON POST's headers, with the key when given. */
export const json = (key?: string): Record<string, string> => ({
  "Content-Type": "application/json",
  ...(key !== undefined && { Authorization: `Bearer ${key}` }),
});

/** The same kind of context for OFREP, the user as OpenFeature's targetingKey (docs/openfeature.md). */
function ofrepBody(): string {
  const context = { targetingKey: `user-${pick(USERS)}`, accountId: `acct-${pick(ACCOUNTS)}`, country: COUNTRIES[pick(COUNTRIES.length)] };
  return JSON.stringify({ context });
}

/** The OFREP single-flag scenario's flag: a demo-bundle parameter. */
export const BENCH_FLAG = "checkout.buttonColor";

/** A POST whose body is rebuilt for every request. */
function postEach(path: string, headers: Record<string, string>, body: () => string): RequestSpec[] {
  return [{ method: "POST", path, headers, setupRequest: (request) => ({ ...request, body: body() }) }];
}

function exposure(i: number, timestamp: string): Record<string, unknown> {
  const bucket = pick(1000);
  const treatment = bucket >= 500;
  return {
    type: "exposure",
    unitKey: `user-${pick(USERS)}`,
    timestamp,
    decisionId: `dec-${i}-${pick(1e9)}`,
    assignments: treatment ? { "checkout.buttonColor": "green", "checkout.oneClick": true } : { "checkout.buttonColor": "blue", "checkout.oneClick": false },
    layers: [
      {
        layerId: "checkout",
        bucket,
        policyId: "checkout-test",
        policyKey: "checkout-test",
        allocationName: treatment ? "treatment" : "control",
        allocationKey: treatment ? "treatment" : "control",
      },
    ],
    sdkName: "vane-js",
    sdkVersion: "0.1.0",
  };
}

function track(i: number, timestamp: string): Record<string, unknown> {
  const base = { type: "track", unitKey: `user-${pick(USERS)}`, timestamp, sessionId: `s-${pick(1e6)}` };
  switch (i % 3) {
    case 0:
      return { ...base, event: "purchase", value: 10 + pick(90), properties: { sku: `SKU-${pick(500)}`, quantity: 1 + pick(3) } };
    case 1:
      return { ...base, event: "signup", properties: { plan: pick(2) === 0 ? "free" : "pro" } };
    default:
      return { ...base, event: "add_to_cart", properties: { sku: `SKU-${pick(500)}` } };
  }
}

export function eventBatchPool(): string[] {
  const timestamp = new Date().toISOString();
  return Array.from({ length: BATCH_POOL }, () => {
    const events = Array.from({ length: EVENTS_PER_BATCH }, (_, i) => (i % 2 === 0 ? exposure(i, timestamp) : track(i >> 1, timestamp)));
    return JSON.stringify({ events });
  });
}

/** Events a batch answer acknowledges: Vane's `{"accepted": n, …}`, and the hello-world's. */
const acceptedEvents = (body: string): number => (JSON.parse(body) as { accepted?: number }).accepted ?? 0;

/** What the hello-world is sent as a key: the same length as Vane's, so both parse the same headers. */
export const HELLO_KEY = "vane_sk_helloworldhelloworldhelloworldhello";

/**
 * The hello-world GET's request headers: those config 304 sends (a key as long as Vane's, and an
 * If-None-Match as a bundle version's ETag), so that both parse the same headers and config 304's
 * excess is Vane's own work.
 */
export const HELLO_GET_HEADERS: Readonly<Record<string, string>> = { Authorization: `Bearer ${HELLO_KEY}`, "If-None-Match": '"1"' };

export function helloScenarios(): Scenario[] {
  // The same headers and bodies as the resolve and events scenarios, so the load generator does the same work.
  const headers = json(HELLO_KEY);
  const batches = eventBatchPool();
  const batchOf = (path: string) => () => postEach(path, headers, () => batches[pick(batches.length)]!);
  return [
    { key: "hello-get", name: "hello-world GET / (config 304's request headers)", path: "/", requests: () => [{ method: "GET", path: "/", headers: HELLO_GET_HEADERS }] },
    { key: "hello-post", name: "hello-world POST / (parses the resolve body)", path: "/", requests: () => postEach("/", headers, resolveBody) },
    {
      key: "hello-durable",
      name: "hello-world POST /durable (parses the resolve body, appends it to a file, fdatasync per group)",
      path: "/durable",
      requests: () => postEach("/durable", headers, resolveBody),
    },
    {
      key: "hello-batch",
      name: `hello-world POST /batch (parses the events rows' ${EVENTS_PER_BATCH}-event batches)`,
      path: "/batch",
      requests: batchOf("/batch"),
      accepted: acceptedEvents,
    },
    {
      key: "hello-durable-batch",
      name: `hello-world POST /durable/batch (parses the same batches, appends each to a file, fdatasync per group)`,
      path: "/durable/batch",
      requests: batchOf("/durable/batch"),
      accepted: acceptedEvents,
    },
  ];
}

export interface VaneTarget {
  readonly key: string;
  readonly projectId: string;
  readonly etag: string;
}

/** The config's ETag for the 304 rows, fetched once: a key or project that does not work fails here, not as a load of 4xx. */
export async function configEtag(url: string, key: string, projectId: string): Promise<string> {
  const config = await fetch(`${url}/v1/config/${projectId}`, { headers: { Authorization: `Bearer ${key}` } });
  const etag = config.headers.get("ETag");
  if (config.status !== 200 || etag === null) throw new Error(`config probe: ${config.status} ${await config.text()}`);
  return etag;
}

export function vaneScenarios(vane: VaneTarget): Scenario[] {
  const auth = { Authorization: `Bearer ${vane.key}` };
  const config = `/v1/config/${vane.projectId}`;
  const batches = eventBatchPool();
  return [
    { key: "config-200", name: `GET ${config} → 200`, path: config, requests: () => [{ method: "GET", path: config, headers: auth }] },
    {
      key: "config-304",
      name: `GET ${config} If-None-Match → 304`,
      path: config,
      requests: () => [{ method: "GET", path: config, headers: { ...auth, "If-None-Match": vane.etag } }],
      expectStatus: 304,
    },
    ...[1, 16].map((connections) => ({
      key: `events-${connections}`,
      name: `POST /v1/events/batch, ${EVENTS_PER_BATCH} events, ${connections} connection${connections === 1 ? "" : "s"}`,
      path: "/v1/events/batch",
      requests: () => postEach("/v1/events/batch", json(vane.key), () => batches[pick(batches.length)]!),
      accepted: acceptedEvents,
      connections,
    })),
    {
      key: "events",
      name: `POST /v1/events/batch, ${EVENTS_PER_BATCH} events`,
      path: "/v1/events/batch",
      requests: () => postEach("/v1/events/batch", json(vane.key), () => batches[pick(batches.length)]!),
      accepted: acceptedEvents,
    },
    // Issue 15's "p99 of resolve while the Parquet copy and the learner are busy": right after
    // the 64-connection events row, with its backlog still being copied.
    {
      key: "resolve-busy",
      name: "POST /v1/resolve right after the events rows (Parquet copy catching up)",
      path: "/v1/resolve",
      requests: () => postEach("/v1/resolve", json(vane.key), resolveBody),
      whileBusy: true,
    },
    { key: "resolve", name: "POST /v1/resolve", path: "/v1/resolve", requests: () => postEach("/v1/resolve", json(vane.key), resolveBody) },
    {
      key: "ofrep-bulk",
      name: "POST /ofrep/v1/evaluate/flags (OFREP bulk, every flag)",
      path: "/ofrep/v1/evaluate/flags",
      requests: () => postEach("/ofrep/v1/evaluate/flags", json(vane.key), ofrepBody),
    },
    {
      key: "ofrep-flag",
      name: `POST /ofrep/v1/evaluate/flags/${BENCH_FLAG} (OFREP single flag)`,
      path: `/ofrep/v1/evaluate/flags/${BENCH_FLAG}`,
      requests: () => postEach(`/ofrep/v1/evaluate/flags/${BENCH_FLAG}`, json(vane.key), ofrepBody),
    },
    {
      key: "decide",
      name: `POST /v1/decide/${BENCH_POLICY} (Thompson, 4 arms)`,
      path: `/v1/decide/${BENCH_POLICY}`,
      requests: () => postEach(`/v1/decide/${BENCH_POLICY}`, json(vane.key), resolveBody),
    },
  ];
}
