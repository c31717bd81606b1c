// The first `vane serve` on an empty data folder: the demo project (its bundle and two keys
// pinned to it), so that the printed curl commands work at once. The secrets exist only in what
// this prints: the store keeps their hashes.
import { resolve } from "node:path";
import type { Bundle } from "../bundle/types.js";
import { type NewKey, createKey } from "../server/auth/key-admin.js";
import type { BundleSummary, KeyRecord, Stores } from "../store/types.js";
import { passwordNote, vaneCommand, whereArgs } from "./command-hints.js";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "./demo-bundle.js";
import { plural } from "./output.js";
import { describeStore, nodeSha256, storeUrlOf, type StoreWhere } from "./store-access.js";

const DEMO_SCOPES = ["sdk:read", "sdk:write"];
export const DEMO_CONTEXT = { userId: "user-1", accountId: "acct-1", country: "US" };

export interface FirstRun {
  readonly bundle: Bundle;
  readonly publishable: NewKey;
  readonly serverSide: NewKey;
}

/** Seeds the demo project when the store holds no bundles and no keys; undefined otherwise. */
export async function seedFirstRun(stores: Stores, now: number): Promise<FirstRun | undefined> {
  const [bundles, keys] = await Promise.all([stores.bundles.list(), stores.keys.list()]);
  if (bundles.length > 0 || keys.length > 0) return undefined;
  const bundle = demoBundle(new Date(now).toISOString());
  await stores.bundles.put(bundle, bundle.version);
  const at = { sha256: nodeSha256, now };
  const tenant = { orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: DEMO_SCOPES };
  const publishable = await createKey(stores.keys, { kind: "pk", ...tenant }, at);
  const serverSide = await createKey(stores.keys, { kind: "sk", ...tenant }, at);
  return { bundle, publishable, serverSide };
}

/** A server bound to every interface is reached on loopback by the commands we print. */
export function reachableUrl(url: string): string {
  return url.replace("//0.0.0.0:", "//127.0.0.1:").replace("//[::]:", "//[::1]:");
}

/** Ready-to-paste commands, each on one line with a comment line above it. */
export function curlCommands(url: string, keys: { pk: string; sk: string }, now: number): string[] {
  const json = "-H 'Content-Type: application/json'";
  const event = { type: "track", unitKey: DEMO_CONTEXT.userId, timestamp: new Date(now).toISOString(), event: "purchase", properties: { sku: "A-1" } };
  return [
    "# the demo bundle, as browser SDKs fetch it (publishable key)",
    `curl -s ${url}/v1/config/${DEMO_PROJECT} -H 'Authorization: Bearer ${keys.pk}'`,
    "# resolve parameters for a user (server-side key: publishable keys cannot resolve)",
    `curl -s -X POST ${url}/v1/resolve -H 'Authorization: Bearer ${keys.sk}' ${json} -d '${JSON.stringify({ context: DEMO_CONTEXT })}'`,
    "# an adaptive decision: the bandit's arm from what it has learned, with its propensity",
    `curl -s -X POST ${url}/v1/decide/recs-strategy -H 'Authorization: Bearer ${keys.sk}' ${json} -d '${JSON.stringify({ context: DEMO_CONTEXT })}'`,
    "# send a track event",
    `curl -s -X POST ${url}/v1/events/batch -H 'Authorization: Bearer ${keys.pk}' ${json} -d '${JSON.stringify({ events: [event] })}'`,
    "# health (no key)",
    `curl -s ${url}/health`,
  ];
}

export interface Banner {
  readonly version: string;
  readonly url: string;
  /** The server's --data and --store, for the lines saying where its data is and for commands to paste. */
  readonly where: StoreWhere;
  readonly now: number;
}

/** Where the server keeps its data: the folder's SQLite file, or the shared store (its Parquet copy still in the folder). */
function storeLines(where: StoreWhere): string[] {
  const folder = `Data folder: ${resolve(where.data)}`;
  return storeUrlOf(where) === undefined ? [folder] : [`Store: ${describeStore(where)} (keys, bundles, events)`, folder];
}

/** A printed `vane` command, with the options that reach this server's store, and what *** stands for when it shows. */
function command(verb: string, where: StoreWhere): string[] {
  const note = passwordNote(where);
  return [`${vaneCommand()} ${verb}${whereArgs(where)}`, ...(note === "" ? [] : [note])];
}

export function firstRunText(banner: Banner, run: FirstRun): string {
  const url = reachableUrl(banner.url);
  const { publishable: pk, serverSide: sk, bundle } = run;
  return [
    `Vane ${banner.version} is listening on ${banner.url}`,
    ...storeLines(banner.where),
    "",
    "First run: the store was empty, so it now holds the demo project:",
    `  bundle           ${bundle.projectId}/${bundle.env} (org ${bundle.orgId}) version ${bundle.version}`,
    `  publishable key  ${pk.secret}  (id ${pk.record.id}; ${DEMO_SCOPES.join(", ")}; browser-safe)`,
    `  server-side key  ${sk.secret}  (id ${sk.record.id}; ${DEMO_SCOPES.join(", ")}; keep it on servers)`,
    "These secrets are shown once: the store keeps only their hashes. Make new keys with",
    ...command(`keys create --org ${DEMO_ORG} --project ${DEMO_PROJECT} --scopes sdk:read,sdk:write --kind sk`, banner.where).map((line) => `  ${line}`),
    "",
    "Try it:",
    ...curlCommands(url, { pk: pk.secret, sk: sk.secret }, banner.now).map((line) => `  ${line}`),
    "",
    "Stop with Ctrl-C.",
  ].join("\n");
}

export function laterStartText(banner: Banner, loaded: { bundles: readonly BundleSummary[]; keys: readonly KeyRecord[] }): string {
  const { bundles, keys } = loaded;
  const shown = bundles.slice(0, 5).map((b) => `${b.projectId}/${b.env}`);
  const names = bundles.length === 0 ? "" : ` (${shown.join(", ")}${bundles.length > shown.length ? ", ..." : ""})`;
  const hints = [
    ...(bundles.length === 0 ? ["No bundles yet: publish one with", ...command("bundles put FILE", banner.where).map((line) => `  ${line}`)] : []),
    ...(keys.length === 0 ? ["No keys yet: create one with", ...command("keys create --org ORG --scopes SCOPES", banner.where).map((line) => `  ${line}`)] : []),
  ];
  return [
    `Vane ${banner.version} is listening on ${banner.url}`,
    ...storeLines(banner.where),
    `Loaded: ${plural(bundles.length, "bundle")}${names}, ${plural(keys.length, "key")}`,
    ...hints,
    `  curl -s ${reachableUrl(banner.url)}/health`,
    "Stop with Ctrl-C.",
  ].join("\n");
}
