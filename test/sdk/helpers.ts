// What the SDK tests share: a real server (test/server/harness.ts) holding the demo bundle with a
// publishable and a server-side key, a fetch that records every request the client makes and its
// answer, the engine compiled once, and a wait for asynchronous work on real (unfaked) time.
import { readFileSync } from "node:fs";
import { vi } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { createClient } from "../../src/sdk/index.js";
import type { ClientOptions, VaneClient } from "../../src/sdk/index.js";
import { ENGINE_URL } from "../../src/engine/loader.js";
import { START, type TestServer, type TestServerOptions, startTestServer } from "../server/harness.js";
import { loggedEvents } from "../store/logged-events.js";
import { WAIT_MS } from "../wait.js";

export { DEMO_ORG, DEMO_PROJECT, START, demoBundle };

/** Compiled once: each client instantiates it synchronously, as a worker would. */
export const wasm = new WebAssembly.Module(readFileSync(ENGINE_URL));

export const VERSION_1 = "2026-11-21T11:00:00.000Z";
export const VERSION_2 = "2026-11-21T11:30:00.000Z";

export interface SdkServer {
  readonly server: TestServer;
  /** Publishable: config and events. */
  readonly pk: string;
  /** Server-side: config, resolve and events. */
  readonly sk: string;
}

export async function startSdkServer(options: TestServerOptions & { bundle?: Bundle } = {}): Promise<SdkServer> {
  const server = await startTestServer(options);
  const scopes = ["sdk:read", "sdk:write"];
  const pk = await server.key({ kind: "pk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes });
  const sk = await server.key({ kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes });
  await server.putBundle(options.bundle ?? demoBundle(VERSION_1));
  return { server, pk, sk };
}

export interface Call {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: Headers;
  readonly body: string | undefined;
  readonly keepalive: boolean;
  /** Set when the answer arrives. */
  status?: number;
  /** The events posted, for event batches. */
  readonly events: Record<string, unknown>[];
}

/** A fetch that records each request (the real one does the work). */
export class FetchLog {
  readonly calls: Call[] = [];

  readonly fetch: typeof fetch = async (input, init = {}) => {
    const url = new URL(String(input));
    const body = typeof init.body === "string" ? init.body : undefined;
    const call: Call = {
      method: init.method ?? "GET",
      path: url.pathname + url.search,
      headers: new Headers(init.headers),
      body,
      keepalive: init.keepalive === true,
      events: body ? ((JSON.parse(body) as { events?: Record<string, unknown>[] }).events ?? []) : [],
    };
    this.calls.push(call);
    const response = await fetch(input, init);
    call.status = response.status;
    return response;
  };

  to(pathPrefix: string): Call[] {
    return this.calls.filter((c) => c.path.startsWith(pathPrefix));
  }

  /** Every answer has arrived. */
  get settled(): boolean {
    return this.calls.every((c) => c.status !== undefined);
  }
}

/** Options for a client of `sdk`'s demo project; errors are collected rather than logged. */
export function clientOptions(sdk: SdkServer, log: FetchLog, errors: unknown[], extra: Partial<ClientOptions> = {}): ClientOptions {
  return {
    baseUrl: sdk.server.url,
    apiKey: sdk.pk,
    projectId: DEMO_PROJECT,
    wasm,
    fetch: log.fetch,
    now: () => sdk.server.clock.now(),
    onError: (error) => errors.push(error),
    ...extra,
  };
}

export function client(sdk: SdkServer, log: FetchLog, errors: unknown[], extra: Partial<ClientOptions> = {}): Promise<VaneClient> {
  return createClient(clientOptions(sdk, log, errors, extra));
}

/**
 * Waits on real time for work the client does in the background (a poll's answer, a send) to
 * reach `done`. Fake timers fake only setTimeout, so setImmediate and Date are real here.
 */
export async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Timers the client sets (polls, flushes, retries) move only when the test says. */
export function fakeTimers(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
}

/** The store's events of one type, oldest first. */
export async function storedEvents(server: TestServer, type: "exposure" | "track" | "decision"): Promise<Record<string, unknown>[]> {
  const events = await loggedEvents(server.stores.events).list({ type, limit: 100_000 });
  return events.reverse().map((e) => e.event.body as Record<string, unknown>);
}

/** A client on `bundle` alone (no server): every event it sends is kept in `events`; a send error fails the test. */
export interface Recorder {
  client: VaneClient;
  events: Record<string, unknown>[];
}

export async function recorder(bundle: Bundle, now: () => number): Promise<Recorder> {
  const events: Record<string, unknown>[] = [];
  const client = await createClient({
    baseUrl: "http://vane.test",
    apiKey: "vane_pk_test",
    projectId: bundle.projectId,
    bootstrap: bundle,
    wasm,
    now,
    flushAt: 1000,
    flushIntervalMs: 3_600_000,
    onError: (error) => {
      throw error;
    },
    fetch: async (_input, init) => {
      events.push(...(JSON.parse(String(init?.body)) as { events: Record<string, unknown>[] }).events);
      return Response.json({ accepted: 0 });
    },
  });
  return { client, events };
}
