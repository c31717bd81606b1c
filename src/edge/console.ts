// The console (docs/console.md) on the Worker: on when the variable VANE_CONSOLE is "on". Its
// files are bundled into worker.js (scripts/build-edge.mjs; worker.ts hands them here), so a
// deploy carries its own console and nothing is fetched at run time. Sessions must hold across isolates, so their signing secret
// is a Worker secret: VANE_CONSOLE_SECRET, or else one derived from VANE_ADMIN_TOKEN (changing the
// token then ends every session). Experiment results need DuckDB, which a Worker cannot load: the
// results page says where to compute them instead.
import { AdminRefusal } from "../server/admin/refusal.js";
import type { AssetReader } from "../server/console/assets.js";
import type { ConsoleResults } from "../server/console/results.js";
import type { ConsoleOptions } from "../server/console/routes.js";

export interface ConsoleVars {
  /** "on" serves the console at /console; "off" or unset does not. */
  readonly VANE_CONSOLE?: string;
  /** Signs console sessions (a Worker secret); derived from VANE_ADMIN_TOKEN when unset. */
  readonly VANE_CONSOLE_SECRET?: string;
  readonly VANE_ADMIN_TOKEN?: string;
}

export const EDGE_RESULTS_MESSAGE =
  "Experiment results are not computed at the edge: `vane results` sums the events with DuckDB, which a Worker cannot run. The events are in the R2 archive as Parquet files with the Node archive's columns (events/dt=…/hour=…/): query them with DuckDB where it runs (docs/edge.md)";

/** What the console's live stream says instead of event counts: this isolate stores no events, the queue's consumer does. */
export const EDGE_LIVE_EVENTS_MESSAGE =
  "Live event counts are not available at the edge: the Queue's consumer stores events in another invocation, so no request hears of them. Reload the page for the counts in D1";

const encoder = new TextEncoder();

/** The console's options for createApp; undefined when VANE_CONSOLE is off. */
export function edgeConsoleOf(vars: ConsoleVars, files: Readonly<Record<string, string>>): ConsoleOptions | undefined {
  const on = (vars.VANE_CONSOLE ?? "").trim();
  if (on === "" || on === "off") return undefined;
  if (on !== "on") throw new Error(`VANE_CONSOLE must be "on" or "off", got "${on.slice(0, 40)}"`);
  return { assets: bundledAssets(files), sessionSecret: sessionSecretOf(vars), results: atTheEdge, liveEventsUnavailable: EDGE_LIVE_EVENTS_MESSAGE };
}

/**
 * Every isolate must accept the sessions the others signed: a random secret per isolate would
 * sign a person out at whichever isolate answers next, so without a secret the console is refused.
 */
function sessionSecretOf(vars: ConsoleVars): Uint8Array {
  const secret = vars.VANE_CONSOLE_SECRET ?? "";
  if (secret !== "") return encoder.encode(secret);
  const token = vars.VANE_ADMIN_TOKEN ?? "";
  if (token === "") throw new Error("VANE_CONSOLE=on needs a Worker secret to sign console sessions: set VANE_ADMIN_TOKEN or VANE_CONSOLE_SECRET");
  // HMAC's key, labelled so that it signs nothing else the token might sign.
  return encoder.encode(`vane console sessions\u0000${token}`);
}

function bundledAssets(files: Readonly<Record<string, string>>): AssetReader {
  const encoded = new Map<string, Uint8Array>();
  return async (name) => {
    if (!Object.hasOwn(files, name)) return undefined;
    let bytes = encoded.get(name);
    if (bytes === undefined) encoded.set(name, (bytes = encoder.encode(files[name])));
    return bytes;
  };
}

const atTheEdge: ConsoleResults = () => Promise.reject(new AdminRefusal("NOT_FOUND", EDGE_RESULTS_MESSAGE));
