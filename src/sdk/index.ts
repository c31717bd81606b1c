// vane/client: the engine in browsers and workers, resolving from the bundle exactly as the
// server does, with exposures and track events sent in batches. Built to one ESM file by
// scripts/build-client.mjs (dist/client/vane-client.js, the .wasm files beside it).
export { createClient } from "./client.js";
export { VaneError } from "./http.js";
export { EventsRefused, type RefusedEvent } from "./events-refused.js";
export type { ClientOptions, FlagReading, ResolveResult, TrackOptions, VaneClient } from "./types.js";
export type { WasmSource } from "./engine-source.js";
export type { DecideResult } from "./decider.js";
export type { Details, ErrorCode, Reason, Widen } from "./flag-values.js";
export type { ResolvedLayer } from "../bundle/response.js";
export type * from "../bundle/types.js";
