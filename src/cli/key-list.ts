// `vane keys list`, and how a key is described: public fields and status only — the store has
// no secrets, and hashes are not shown either (they are what a lookup matches).
import { keyStatus } from "../server/admin/key-operations.js";
import type { PublicKey } from "../server/admin/operations.js";
import { dataHelp, parseVerbArgs } from "./args.js";
import { shortTime, table } from "./output.js";
import { REMOTE_STORE_OPTIONS, remoteHelp, withStores, describeStore } from "./store-access.js";
import { vaneCommand, whereArgs } from "./command-hints.js";
import type { Verb } from "./verb.js";

const USAGE = `Usage: vane keys list [--data DIR]

Lists every key: id, kind, organization, project ("(org)" for an org-scoped key), scopes,
rate limit, creation time and status (active, expired, revoked, or rotated-grace: replaced by
rotation and still valid until the date shown). Never shows a secret.
${dataHelp(15)}
${remoteHelp(15)}`;

/** `rotated-grace until 2026-11-28T12:00:00Z (replaced by key_…)`, `active`, ... */
export function statusText(key: PublicKey, now: number): string {
  const status = keyStatus(key, now);
  const replaced = key.rotatedTo === undefined ? "" : ` (replaced by ${key.rotatedTo})`;
  switch (status) {
    case "revoked":
      return `revoked ${shortTime(key.revokedAt!)}${replaced}`;
    case "expired":
      return `expired ${shortTime(key.expiresAt!)}${replaced}`;
    case "rotated-grace":
      return `rotated-grace until ${shortTime(key.expiresAt ?? "")}${replaced}`;
    case "active":
      return key.expiresAt === undefined ? "active" : `active until ${shortTime(key.expiresAt)}`;
  }
}

/** `sk, demo-org/demo, sdk:read,sdk:write`. */
export function describeKey(key: PublicKey): string {
  return `${key.kind}, ${key.orgId}/${key.projectId ?? "(org)"}, ${key.scopes.join(",")}`;
}

export const keysListVerb: Verb = {
  name: "list",
  summary: "list keys and their status (never secrets)",
  usage: USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: USAGE, options: REMOTE_STORE_OPTIONS, positionals: [0, 0] });
    const keys = await withStores(values, "existing", (stores) => stores.admin.listKeys());
    if (keys.length === 0) {
      io.out(`No keys in ${describeStore(values)}. Create one with \`${vaneCommand()} keys create --org ORG --scopes SCOPES${whereArgs(values)}\`.`);
      return 0;
    }
    const now = Date.now();
    const rows = keys.map((k) => [
      k.id,
      k.kind,
      k.orgId,
      k.projectId ?? "(org)",
      k.scopes.join(","),
      k.rateLimit === undefined ? "-" : `${k.rateLimit.requestsPerSecond}/s burst ${k.rateLimit.burst}`,
      shortTime(k.createdAt),
      statusText(k, now),
    ]);
    io.out(table(["ID", "KIND", "ORG", "PROJECT", "SCOPES", "RATE", "CREATED", "STATUS"], rows));
    return 0;
  },
};
