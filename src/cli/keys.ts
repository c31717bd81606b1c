// `vane keys create|list|revoke|rotate` (decisions.md §1, §8). New secrets are printed once and
// never stored; revoke and rotate take a key's id or its full secret.
import { didYouMean } from "../bundle/unknown-fields.js";
import type { BundleProblem } from "../bundle/validate.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import { KEY_KINDS, KNOWN_SCOPES, checkKeyFields } from "../server/admin/key-checks.js";
import type { AdminOperations, PublicKey } from "../server/admin/operations.js";
import { AdminRefusal } from "../server/admin/refusal.js";
import { keyIdOf, keyKind, secretHash } from "../server/auth/api-key.js";
import type { BundleStore, KeyKind } from "../store/types.js";
import { CliError, dataHelp, UsageError, parseVerbArgs, required } from "./args.js";
import { noteNewStore } from "./command-hints.js";
import { describeKey, keysListVerb } from "./key-list.js";
import { shortTime } from "./output.js";
import { REMOTE_STORE_OPTIONS, nodeSha256, remoteHelp, withStores, describeStore } from "./store-access.js";
import type { Verb, VerbGroup } from "./verb.js";

const CREATE_USAGE = `Usage: vane keys create --org ORG [--project P [--force]] --scopes S1,S2 [--kind sk]
                        [--expires ISO] [--rate N --burst M] [--data DIR]

Creates a key and prints its secret once (the store keeps only its hash).
  --org ORG        the key's organization
  --project P      pins the key to one project (default: org-scoped); refused when no stored
                   bundle has that project (a typo), unless --force
  --force          create a key for a project that has no bundle yet
  --scopes LIST    comma-separated: ${KNOWN_SCOPES.join(", ")}
  --kind K         pk publishable (browser-safe; SDK scopes only), sk server-side (default),
                   mk management, ak admin
  --expires ISO    expiry, an ISO 8601 time with a zone, e.g. 2027-01-01T00:00:00Z
  --rate N         rate limit: requests per second (with --burst)
  --burst M        rate limit: bucket size, at least 1 (with --rate)
${dataHelp(19)}
${remoteHelp(19)}`;

const REVOKE_NOTE = `Running servers refuse it within about ${Math.ceil(DEFAULT_LIMITS.keyCacheMs / 1000)} s.`;
const REVOKE_USAGE = `Usage: vane keys revoke ID|SECRET [--data DIR]

Revokes a key, named by its id (key_…, see \`vane keys list\`) or its full secret.
${REVOKE_NOTE}
${dataHelp(15)}
${remoteHelp(15)}`;

const ROTATE_USAGE = `Usage: vane keys rotate ID|SECRET [--data DIR]

Issues a replacement with the same organization, project, scopes, expiry and rate limit, and
prints its secret once. The old key stays valid for 7 days (or until its own earlier expiry).
Revoked, expired and already rotated keys are not rotated.
${dataHelp(15)}
${remoteHelp(15)}`;

const DATA_OPTION = REMOTE_STORE_OPTIONS;
/** Where a problem of the key's fields came from on the command line. */
const FLAG_OF: Readonly<Record<string, string>> = {
  orgId: "--org",
  projectId: "--project",
  scopes: "--scopes",
  expiresAt: "--expires",
  "rateLimit.requestsPerSecond": "--rate",
  "rateLimit.burst": "--burst",
};

const createVerb: Verb = {
  name: "create",
  summary: "create a key; prints its secret once",
  usage: CREATE_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, {
      usage: CREATE_USAGE,
      options: {
        ...DATA_OPTION,
        org: { type: "string" },
        project: { type: "string" },
        scopes: { type: "string" },
        kind: { type: "string", default: "sk" },
        expires: { type: "string" },
        rate: { type: "string" },
        burst: { type: "string" },
        force: { type: "boolean", default: false },
      },
      positionals: [0, 0],
    });
    const kind = values.kind as KeyKind;
    if (!KEY_KINDS.includes(kind)) throw new UsageError(`--kind must be one of ${KEY_KINDS.join(", ")}, got "${values.kind}"`, CREATE_USAGE);
    if ((values.rate === undefined) !== (values.burst === undefined)) throw new UsageError("--rate and --burst go together", CREATE_USAGE);
    const input = {
      orgId: required(values.org, "--org", CREATE_USAGE),
      ...(values.project !== undefined && { projectId: values.project }),
      scopes: required(values.scopes, "--scopes", CREATE_USAGE).split(",").map((s) => s.trim()),
      ...(values.expires !== undefined && { expiresAt: values.expires }),
      ...(values.rate !== undefined && { rateLimit: { requestsPerSecond: Number(values.rate), burst: Number(values.burst) } }),
    };
    const now = Date.now();
    const problems: BundleProblem[] = [];
    checkKeyFields(problems, input, { base: "", kind });
    if (problems.length === 0 && input.expiresAt !== undefined && Date.parse(input.expiresAt) <= now) {
      problems.push({ path: "expiresAt", message: "is in the past: the key would never work" });
    }
    if (problems.length > 0) {
      const lines = problems.map((p) => `  ${FLAG_OF[p.path.replace(/\[\d+\]$/, "")] ?? p.path}: ${p.message}`);
      io.err([`vane keys create: refused`, ...lines].join("\n"));
      return 2;
    }
    noteNewStore(values, io);
    const created = await withStores(values, "create", async (stores) => {
      if (input.projectId !== undefined && !values.force) await refuseUnknownProject(stores.bundles, input.projectId);
      try {
        return await stores.admin.createKey({ kind, ...input });
      } catch (error) {
        const [refused] = error instanceof AdminRefusal ? error.problems : [];
        if (refused !== undefined) throw new CliError(`refused: ${FLAG_OF[refused.path] ?? refused.path} ${refused.message}`);
        throw error;
      }
    });
    io.out(newKeyText(`Created key ${created.key.id} (${describeKey(created.key)}${limitsText(created.key)}) in ${describeStore(values)}`, created.secret));
    return 0;
  },
};

const revokeVerb: Verb = {
  name: "revoke",
  summary: "revoke a key by id or secret",
  usage: REVOKE_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: REVOKE_USAGE, options: DATA_OPTION, positionals: [1, 1] });
    return withStores(values, "existing", async (stores) => {
      const key = await lookUp(stores.admin, positionals[0]!);
      const { key: revoked, alreadyRevoked } = await stores.admin.revokeKey(key.id);
      if (alreadyRevoked) {
        io.out(`${key.id} (${describeKey(key)}) was already revoked at ${shortTime(revoked.revokedAt!)}.`);
        return 0;
      }
      io.out(`Revoked ${key.id} (${describeKey(key)}) at ${shortTime(revoked.revokedAt!)}. ${REVOKE_NOTE}`);
      return 0;
    });
  },
};

const rotateVerb: Verb = {
  name: "rotate",
  summary: "replace a key; the old one stays valid 7 days",
  usage: ROTATE_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: ROTATE_USAGE, options: DATA_OPTION, positionals: [1, 1] });
    return withStores(values, "existing", async (stores) => {
      const key = await lookUp(stores.admin, positionals[0]!);
      const { key: replacement, secret, old } = await stores.admin.rotateKey(key.id);
      const expiry = replacement.expiresAt === undefined ? "" : `\nThe new key expires at ${shortTime(replacement.expiresAt)}, as the old one did.`;
      io.out(
        newKeyText(`Rotated ${key.id} → ${replacement.id} (${describeKey(replacement)})`, secret) +
          `\nThe old key stays valid until ${shortTime(old.expiresAt ?? "")}, then answers 401 "API key has expired".${expiry}`,
      );
      return 0;
    });
  },
};

/** A project that no stored bundle has is most likely a typo: refused, with the nearest project. */
async function refuseUnknownProject(bundles: BundleStore, project: string): Promise<void> {
  const projects = [...new Set((await bundles.list()).map((b) => b.projectId))];
  if (projects.includes(project)) return;
  const guess = didYouMean(project, projects);
  const known = guess !== undefined ? ` (did you mean ${guess}?)` : projects.length === 0 ? " (no bundles are stored yet)" : ` (the stored projects: ${projects.join(", ")})`;
  throw new CliError(`refused: no bundle has project ${project}${known}; publish its bundle first, or pass --force to create the key anyway`);
}

/** The key named by id or secret; the message never repeats a secret. */
async function lookUp(admin: AdminOperations, idOrSecret: string): Promise<PublicKey> {
  const isSecret = keyKind(idOrSecret) !== undefined;
  if (!isSecret && !/^key_[0-9a-f]{16}$/.test(idOrSecret)) {
    throw new CliError("expected a key id (key_ and 16 hex digits, see `vane keys list`) or a full key secret (vane_<kind>_…)");
  }
  // A secret is looked up by the id its hash gives: it never leaves this process.
  const key = await admin.findKey(isSecret ? keyIdOf(secretHash(idOrSecret, nodeSha256)) : idOrSecret);
  if (key === undefined) throw new CliError(isSecret ? "no key has that secret" : `no key ${idOrSecret}`);
  return key;
}

function newKeyText(heading: string, secret: string): string {
  return `${heading}\nSecret (shown once: the store keeps only its hash):\n  ${secret}`;
}

function limitsText(key: PublicKey): string {
  const expiry = key.expiresAt === undefined ? "" : `, expires ${shortTime(key.expiresAt)}`;
  const rate = key.rateLimit === undefined ? "" : `, ${key.rateLimit.requestsPerSecond}/s burst ${key.rateLimit.burst}`;
  return expiry + rate;
}

export const keysGroup: VerbGroup = {
  name: "keys",
  summary: "create, list, revoke and rotate API keys",
  verbs: [createVerb, keysListVerb, revokeVerb, rotateVerb],
};
