// What the client benchmarks resolve: the demo project's bundle (3 layers, 4 parameters) and the
// resolve benchmark's realistic bundle (8 layers, 20 policies, 100 parameters), each with 4,096
// contexts, the same in Node and in Chromium.
import { demoBundle } from "../../src/cli/demo-bundle.js";
import type { Bundle } from "../../src/bundle/types.js";
import { REALISTIC, makeBundle, makeContexts } from "./bundle.js";

export const CONTEXT_COUNT = 4096; // a power of two: loops pick contexts with a mask

export interface ClientWorkload {
  readonly key: string;
  readonly name: string;
  readonly bundle: Bundle;
  readonly contexts: readonly Record<string, unknown>[];
}

export function clientWorkloads(): ClientWorkload[] {
  const countries = ["US", "CA", "NL", "DE"];
  const demoContexts = makeContexts(CONTEXT_COUNT).map((c, i) => ({ userId: c.userId, accountId: `acct-${i % 500}`, country: countries[i % countries.length] }));
  return [
    { key: "demo", name: "demo bundle (3 layers, 4 parameters)", bundle: demoBundle("2026-11-21T08:00:00.000Z"), contexts: demoContexts },
    { key: "realistic", name: "realistic bundle (8 layers, 20 policies, 100 parameters)", bundle: makeBundle(REALISTIC), contexts: makeContexts(CONTEXT_COUNT) },
  ];
}

/** A bench's stand-in for the service: event batches are accepted, nothing leaves the machine. */
export const SINK_FETCH_SOURCE = `async (input, init) => {
  const { events } = await new Request(input, init).json();
  return Response.json({ accepted: events.length, pipelineWritten: events.length, parquetPipelineWritten: events.length });
}`;
