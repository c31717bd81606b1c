import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROTATION_GRACE_MS } from "../../src/server/auth/key-admin.js";
import { bundleFor, inStore, jsonFile, rowOf, secret, sha256Hex, tempDir, vane } from "./helpers.js";

const SECRET_LINE = /^ {2}(vane_(?:pk|sk|mk|ak)_[A-Za-z0-9_-]{32,})$/m;

/** A data folder whose store holds a bundle of acme's project shop, the one the keys here are for. */
async function shopStore(): Promise<string> {
  const data = tempDir();
  await inStore(data, (stores) => stores.bundles.put({ ...bundleFor("shop", "2026-01-01T00:00:00Z"), orgId: "acme" }, "2026-01-01T00:00:00Z"));
  return data;
}

/** Runs `vane keys create ...`; returns the printed secret and id. */
async function create(data: string, ...options: string[]): Promise<{ secret: string; id: string; out: string }> {
  const run = await vane("keys", "create", "--data", data, ...options);
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  const printed = SECRET_LINE.exec(run.out)?.[1];
  const id = /^Created key (key_[0-9a-f]{16}) /.exec(run.out)?.[1];
  if (printed === undefined || id === undefined) throw new Error(`unexpected output:\n${run.out}`);
  return { secret: printed, id, out: run.out };
}

describe("vane keys create", () => {
  it("stores a new key by its hash only and prints its secret once, with its id", async () => {
    const data = await shopStore();
    const made = await create(data, "--org", "acme", "--project", "shop", "--scopes", "sdk:read,sdk:write", "--expires", "2099-01-01T00:00:00Z", "--rate", "5", "--burst", "20");
    expect(made.secret.startsWith("vane_sk_")).toBe(true);
    expect(made.out.split(made.secret)).toHaveLength(2);
    expect(made.id).toBe(`key_${sha256Hex(made.secret).slice(0, 16)}`);
    const record = await inStore(data, (stores) => stores.keys.byId(made.id));
    expect(record).toMatchObject({
      kind: "sk",
      secretHash: sha256Hex(made.secret),
      orgId: "acme",
      projectId: "shop",
      scopes: ["sdk:read", "sdk:write"],
      expiresAt: "2099-01-01T00:00:00Z",
      rateLimit: { requestsPerSecond: 5, burst: 20 },
    });
    const files = readdirSync(data).map((f) => readFileSync(join(data, f)).toString("latin1"));
    expect(files.some((bytes) => bytes.includes(made.secret))).toBe(false);
  });

  it("creates the kind asked for, org-scoped without --project", async () => {
    const data = await shopStore();
    const made = await create(data, "--org", "acme", "--scopes", "sdk:read", "--kind", "pk");
    expect(made.secret.startsWith("vane_pk_")).toBe(true);
    const record = await inStore(data, (stores) => stores.keys.byId(made.id));
    expect(record?.kind).toBe("pk");
    expect(record?.projectId).toBeUndefined();
  });

  it.each([
    [["--scopes", "sdk:read,sdk:rite"], '--scopes: must be one of sdk:read, sdk:write, mgmt:read, mgmt:write, admin, console:read (got "sdk:rite")'],
    [["--scopes", "admin", "--kind", "pk"], "--scopes: a publishable (pk) key ships in browser code"],
    [["--scopes", "sdk:read", "--expires", "2020-01-01T00:00:00Z"], "--expires: is in the past"],
    [["--scopes", "sdk:read", "--expires", "soon"], "--expires: must be an ISO 8601 timestamp"],
    [["--scopes", "sdk:read", "--rate", "0", "--burst", "1"], "--rate: must be a positive finite number (got 0)"],
  ])("refuses %j with exit code 2 and stores nothing", async (options, message) => {
    const data = tempDir();
    const run = await vane("keys", "create", "--data", data, "--org", "acme", ...options);
    expect(run.code).toBe(2);
    expect(run.err).toContain(message);
    expect(run.out).toBe("");
    expect(await inStore(data, (stores) => stores.keys.list())).toEqual([]);
  });

  it.each([
    [["--scopes", "sdk:read"], "--org is required"],
    [["--org", "acme"], "--scopes is required"],
    [["--org", "acme", "--scopes", "sdk:read", "--kind", "xk"], '--kind must be one of pk, sk, mk, ak, got "xk"'],
    [["--org", "acme", "--scopes", "sdk:read", "--rate", "5"], "--rate and --burst go together"],
  ])("gives usage for %j", async (options, message) => {
    const run = await vane("keys", "create", "--data", tempDir(), ...options);
    expect(run.code).toBe(2);
    expect(run.err).toContain(`vane keys create: ${message}`);
    expect(run.err).toContain("Usage: vane keys create");
  });
});

describe("vane keys create for a project no bundle has", () => {
  it("refuses it with the nearest stored project, and creates it with --force", async () => {
    const data = await shopStore();
    const typo = await vane("keys", "create", "--data", data, "--org", "acme", "--project", "shopp", "--scopes", "sdk:read");
    expect(typo).toMatchObject({ code: 1, out: "" });
    expect(typo.err).toBe("vane keys create: refused: no bundle has project shopp (did you mean shop?); publish its bundle first, or pass --force to create the key anyway");
    const far = await vane("keys", "create", "--data", data, "--org", "acme", "--project", "warehouse", "--scopes", "sdk:read");
    expect(far.err).toContain("no bundle has project warehouse (the stored projects: shop)");
    expect(await inStore(data, (stores) => stores.keys.list())).toEqual([]);
    const forced = await create(data, "--org", "acme", "--project", "shopp", "--scopes", "sdk:read", "--force");
    expect(await inStore(data, (stores) => stores.keys.byId(forced.id))).toMatchObject({ projectId: "shopp" });
  });

  it("says when no bundle is stored at all", async () => {
    const data = tempDir();
    await vane("import", jsonFile({ bundles: [] }), "--data", data);
    const run = await vane("keys", "create", "--data", data, "--org", "acme", "--project", "shop", "--scopes", "sdk:read");
    expect(run).toMatchObject({ code: 1, err: expect.stringContaining("no bundle has project shop (no bundles are stored yet)") });
  });
});

describe("vane keys revoke / rotate / list", () => {
  it("revokes by id and by secret; the secret is never echoed", async () => {
    const data = await shopStore();
    const a = await create(data, "--org", "acme", "--scopes", "sdk:read");
    const b = await create(data, "--org", "acme", "--scopes", "sdk:read");
    const byId = await vane("keys", "revoke", a.id, "--data", data);
    expect(byId.code).toBe(0);
    expect(byId.out).toMatch(new RegExp(`^Revoked ${a.id} \\(sk, acme/\\(org\\), sdk:read\\) at `));
    const bySecret = await vane("keys", "revoke", b.secret, "--data", data);
    expect(bySecret.code).toBe(0);
    expect(bySecret.out).toContain(`Revoked ${b.id}`);
    expect(bySecret.out).not.toContain(b.secret);
    const again = await vane("keys", "revoke", a.id, "--data", data);
    expect(again.out).toContain("was already revoked at");
    await inStore(data, async (stores) => {
      for (const id of [a.id, b.id]) expect((await stores.keys.byId(id))?.revokedAt).toBeDefined();
    });
  });

  it("refuses unknown keys and arguments that are neither an id nor a secret", async () => {
    const data = await shopStore();
    await create(data, "--org", "acme", "--scopes", "sdk:read");
    const unknownSecret = secret("sk", "never-stored");
    const bySecret = await vane("keys", "revoke", unknownSecret, "--data", data);
    expect(bySecret).toMatchObject({ code: 1, err: "vane keys revoke: no key has that secret" });
    expect((await vane("keys", "rotate", "key_0000000000000000", "--data", data)).err).toBe("vane keys rotate: no key key_0000000000000000");
    expect((await vane("keys", "revoke", "banana", "--data", data)).err).toMatch(/expected a key id .* or a full key secret/);
    expect((await vane("keys", "revoke", "--data", data)).code).toBe(2);
  });

  it("rotates by id or secret: a new secret once, the old key valid for 7 more days", async () => {
    const data = await shopStore();
    const old = await create(data, "--org", "acme", "--project", "shop", "--scopes", "sdk:read,sdk:write", "--rate", "3", "--burst", "6");
    const started = Date.now();
    const run = await vane("keys", "rotate", old.id, "--data", data);
    expect(run.code).toBe(0);
    const fresh = SECRET_LINE.exec(run.out)?.[1];
    const newId = new RegExp(`^Rotated ${old.id} → (key_[0-9a-f]{16}) `).exec(run.out)?.[1];
    expect(fresh).toBeDefined();
    expect(newId).toBe(`key_${sha256Hex(fresh!).slice(0, 16)}`);
    await inStore(data, async (stores) => {
      const before = await stores.keys.byId(old.id);
      expect(before?.rotatedTo).toBe(newId);
      const graceEnd = Date.parse(before!.expiresAt!);
      expect(graceEnd).toBeGreaterThanOrEqual(started + ROTATION_GRACE_MS);
      expect(graceEnd).toBeLessThanOrEqual(Date.now() + ROTATION_GRACE_MS);
      expect(run.out).toContain(`The old key stays valid until ${before!.expiresAt!.replace(/\.\d+Z$/, "Z")}`);
      expect(await stores.keys.byId(newId!)).toMatchObject({ orgId: "acme", projectId: "shop", scopes: ["sdk:read", "sdk:write"], rateLimit: { requestsPerSecond: 3, burst: 6 } });
    });
    const second = await create(data, "--org", "acme", "--scopes", "sdk:read");
    const bySecret = await vane("keys", "rotate", second.secret, "--data", data);
    expect(bySecret.code).toBe(0);
    expect(bySecret.out).toContain(`Rotated ${second.id} → key_`);
  });

  it("refuses to rotate revoked, expired or already rotated keys, and creates no key then", async () => {
    const data = await shopStore();
    const revoked = await create(data, "--org", "acme", "--scopes", "sdk:read");
    await vane("keys", "revoke", revoked.id, "--data", data);
    const rotated = await create(data, "--org", "acme", "--scopes", "sdk:read");
    await vane("keys", "rotate", rotated.id, "--data", data);
    const expired = secret("sk", "expired");
    await vane("import", jsonFile({ keys: [{ key: expired, orgId: "acme", scopes: ["sdk:read"], expiresAt: "2020-01-01T00:00:00Z" }] }), "--data", data);
    const count = async () => (await inStore(data, (stores) => stores.keys.list())).length;
    const before = await count();
    expect(await vane("keys", "rotate", revoked.id, "--data", data)).toMatchObject({ code: 1, err: expect.stringContaining("a revoked key is not rotated") });
    expect(await vane("keys", "rotate", expired, "--data", data)).toMatchObject({ code: 1, err: expect.stringContaining("expired at 2020-01-01T00:00:00Z") });
    expect(await vane("keys", "rotate", rotated.id, "--data", data)).toMatchObject({ code: 1, err: expect.stringContaining("was already rotated to key_") });
    expect(await count()).toBe(before);
  });

  it("lists every key with its status and dates, never a secret or hash", async () => {
    const data = await shopStore();
    const active = await create(data, "--org", "acme", "--project", "shop", "--scopes", "sdk:read,sdk:write", "--expires", "2099-01-01T00:00:00Z");
    const orgWide = await create(data, "--org", "acme", "--scopes", "mgmt:read", "--kind", "mk", "--rate", "2", "--burst", "4");
    const revoked = await create(data, "--org", "acme", "--scopes", "sdk:read");
    await vane("keys", "revoke", revoked.id, "--data", data);
    const rotated = await create(data, "--org", "acme", "--scopes", "sdk:read");
    const rotation = await vane("keys", "rotate", rotated.id, "--data", data);
    const replacement = /→ (key_[0-9a-f]{16})/.exec(rotation.out)![1]!;
    const expired = secret("sk", "list-expired");
    await vane("import", jsonFile({ keys: [{ key: expired, orgId: "acme", scopes: ["sdk:read"], expiresAt: "2020-01-01T00:00:00Z" }] }), "--data", data);

    const run = await vane("keys", "list", "--data", data);
    expect(run.code).toBe(0);
    expect(run.out.split("\n")[0]).toMatch(/^ID +KIND +ORG +PROJECT +SCOPES +RATE +CREATED +STATUS$/);
    expect(rowOf(run.out, active.id)).toMatch(/ sk +acme +shop +sdk:read,sdk:write +- +\S+ +active until 2099-01-01T00:00:00Z$/);
    expect(rowOf(run.out, orgWide.id)).toMatch(/ mk +acme +\(org\) +mgmt:read +2\/s burst 4 +\S+ +active$/);
    expect(rowOf(run.out, revoked.id)).toMatch(/ revoked \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rowOf(run.out, rotated.id)).toMatch(new RegExp(` rotated-grace until \\d{4}-\\S+Z \\(replaced by ${replacement}\\)$`));
    expect(rowOf(run.out, replacement)).toMatch(/ active$/);
    expect(rowOf(run.out, `key_${sha256Hex(expired).slice(0, 16)}`)).toMatch(/ expired 2020-01-01T00:00:00Z$/);
    expect(run.out.split("\n")).toHaveLength(7);
    for (const s of [active.secret, orgWide.secret, expired]) {
      expect(run.out).not.toContain(s);
      expect(run.out).not.toContain(sha256Hex(s));
      expect(run.out).not.toContain(sha256Hex(s).slice(16, 32));
    }
  });

  it("says so when there are no keys, and refuses a folder without a store", async () => {
    const data = tempDir();
    await vane("import", jsonFile({ bundles: [] }), "--data", data);
    expect((await vane("keys", "list", "--data", data)).out).toBe(`No keys in ${data}. Create one with \`npx vane keys create --org ORG --scopes SCOPES --data ${data}\`.`);
    const missing = await vane("keys", "list", "--data", join(data, "nope"));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^vane keys list: no Vane data in .*nope \(no vane\.db\)/);
  });
});
