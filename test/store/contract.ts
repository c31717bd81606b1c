// The store contract: what every implementation of Stores (src/store/types.ts) must do, run
// against each one (SQLite, PostgreSQL; the edge's D1 and KV for keys and bundles, d1.test.ts),
// as Hono runs one router suite against every router.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Stores } from "../../src/store/types.js";
import { describeBundleHistoryContract } from "./contract-bundle-history.js";
import { describeImportContract } from "./contract-imports.js";
import { describeEventContract } from "./contract-events.js";
import { describeLearnedArmsContract } from "./contract-learned-arms.js";
import { describeLeaseContract } from "./contract-leases.js";
import { describePublicationContract } from "./contract-publication.js";
import { describeTenancyContract } from "./contract-tenancy.js";
import { makeBundle, makeKey } from "./fixtures.js";

export interface StoreFixture {
  readonly stores: Stores;
  cleanup(): Promise<void>;
}

export type MakeStores = () => Promise<StoreFixture>;

/** Fresh stores for each test; the returned getter reads the current test's. */
export function useStores(makeStores: MakeStores): () => Stores {
  let fixture: StoreFixture | undefined;
  beforeEach(async () => {
    fixture = await makeStores();
  });
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });
  return () => {
    if (fixture === undefined) throw new Error("stores are only available inside a test");
    return fixture.stores;
  };
}

/** `listsEvents`: its event store lists and counts itself (EventListing: PostgreSQL's, D1's); SQLite's leaves that to DuckDB. */
export function describeStoreContract(name: string, makeStores: MakeStores, how: { readonly listsEvents?: boolean } = {}): void {
  describe(`${name} store contract`, () => {
    const stores = useStores(makeStores);
    describeKeyContract(stores);
    describeBundleContract(stores);
    describeBundleHistoryContract(stores);
    describeImportContract(stores);
    describeEventContract(stores, how.listsEvents === true);
    describeTenancyContract(stores, how.listsEvents === true);
    describeLeaseContract(stores);
    describe("published open trials", () => describePublicationContract(stores));
    describe("learned arms", () => describeLearnedArmsContract(stores));

    it("reports every store ok when healthy", async () => {
      const health = await stores().health();
      expect(Object.keys(health).sort()).toEqual(["bundles", "events", "keys"]);
      expect(Object.values(health).every((state) => state === "ok")).toBe(true);
    });
  });
}

export function describeKeyContract(stores: () => Stores): void {
  describe("keys", () => {
    it("finds a stored key by hash and by id, with every field as stored", async () => {
      const key = makeKey(1, {
        kind: "pk",
        projectId: "proj-1",
        expiresAt: "2027-01-01T00:00:00.000Z",
        revokedAt: "2026-06-01T00:00:00.000Z",
        rotatedTo: "key_00000000000000ff",
        rateLimit: { requestsPerSecond: 50, burst: 100 },
      });
      await stores().keys.put(key);
      expect(await stores().keys.byHash(key.secretHash)).toStrictEqual(key);
      expect(await stores().keys.byId(key.id)).toStrictEqual(key);
    });

    it("answers undefined for an unknown hash or id", async () => {
      await stores().keys.put(makeKey(1));
      expect(await stores().keys.byHash(makeKey(2).secretHash)).toBeUndefined();
      expect(await stores().keys.byId(makeKey(2).id)).toBeUndefined();
    });

    it("returns a key without optional fields without adding any", async () => {
      const key = makeKey(3);
      await stores().keys.put(key);
      const stored = await stores().keys.byId(key.id);
      expect(stored).toStrictEqual(key);
      expect(Object.keys(stored ?? {}).sort()).toEqual(Object.keys(key).sort());
    });

    it("replaces the key with the same id", async () => {
      const key = makeKey(4);
      await stores().keys.put(key);
      const revoked = { ...key, revokedAt: "2026-02-01T00:00:00.000Z", scopes: ["resolve"] };
      await stores().keys.put(revoked);
      expect(await stores().keys.byId(key.id)).toStrictEqual(revoked);
      expect(await stores().keys.byHash(key.secretHash)).toStrictEqual(revoked);
      expect(await stores().keys.list()).toStrictEqual([revoked]);
    });

    it("revokes by writing the revocation alone: the first one stays, a missing id is undefined", async () => {
      const key = makeKey(5, { rotatedTo: "key_00000000000000ff", expiresAt: "2026-03-01T00:00:00.000Z" });
      await stores().keys.put(key);
      const revoked = { ...key, revokedAt: "2026-02-01T00:00:00.000Z" };
      expect(await stores().keys.revoke(key.id, "2026-02-01T00:00:00.000Z")).toStrictEqual(revoked);
      expect(await stores().keys.revoke(key.id, "2026-02-02T00:00:00.000Z")).toStrictEqual(revoked);
      expect(await stores().keys.byHash(key.secretHash)).toStrictEqual(revoked);
      expect(await stores().keys.revoke(makeKey(6).id, "2026-02-01T00:00:00.000Z")).toBeUndefined();
    });

    it("rotates a key that is neither revoked nor rotated, storing its replacement with it; else writes nothing", async () => {
      const [key, replacement, second] = [makeKey(7), makeKey(8), makeKey(9)];
      await stores().keys.put(key);
      expect(await stores().keys.rotate(key.id, replacement, "2026-01-08T00:00:00.000Z")).toBe(true);
      expect(await stores().keys.byId(key.id)).toStrictEqual({ ...key, rotatedTo: replacement.id, expiresAt: "2026-01-08T00:00:00.000Z" });
      expect(await stores().keys.byId(replacement.id)).toStrictEqual(replacement);
      // Rotated already: the second replacement is not stored.
      expect(await stores().keys.rotate(key.id, second, "2026-01-09T00:00:00.000Z")).toBe(false);
      expect(await stores().keys.byId(second.id)).toBeUndefined();
      // Revoked (say by another server while this rotation was being made): nothing written, still revoked.
      await stores().keys.revoke(replacement.id, "2026-01-02T00:00:00.000Z");
      expect(await stores().keys.rotate(replacement.id, second, "2026-01-09T00:00:00.000Z")).toBe(false);
      expect(await stores().keys.byId(second.id)).toBeUndefined();
      expect(await stores().keys.byId(replacement.id)).toStrictEqual({ ...replacement, revokedAt: "2026-01-02T00:00:00.000Z" });
      expect(await stores().keys.rotate(makeKey(10).id, second, "2026-01-09T00:00:00.000Z")).toBe(false);
    });

    it("lists every key oldest first, whatever the order they were stored in", async () => {
      const keys = [makeKey(30), makeKey(10), makeKey(20)];
      for (const key of keys) await stores().keys.put(key);
      const listed = await stores().keys.list();
      expect(listed.map((key) => key.id)).toEqual([makeKey(10).id, makeKey(20).id, makeKey(30).id]);
      expect(listed[0]).toStrictEqual(makeKey(10));
    });
  });
}

export function describeBundleContract(stores: () => Stores): void {
  describe("bundles", () => {
    it("answers undefined for a project/env without a bundle", async () => {
      await stores().bundles.put(makeBundle("proj-1", "production"), "2026-11-21T10:00:01.000Z");
      expect(await stores().bundles.get("proj-1", "staging")).toBeUndefined();
      expect(await stores().bundles.version("proj-2", "production")).toBeUndefined();
    });

    it("returns the stored bundle, its storage time and its version", async () => {
      const bundle = makeBundle("proj-1", "production", "v-17");
      await stores().bundles.put(bundle, "2026-11-21T10:00:01.000Z");
      expect(await stores().bundles.get("proj-1", "production")).toStrictEqual({
        bundle,
        storedAt: "2026-11-21T10:00:01.000Z",
      });
      expect(await stores().bundles.version("proj-1", "production")).toBe("v-17");
    });

    it("replaces the bundle of the same project and env, leaving other envs alone", async () => {
      await stores().bundles.put(makeBundle("proj-1", "production", "v-1"), "2026-01-01T00:00:00.000Z");
      await stores().bundles.put(makeBundle("proj-1", "staging", "v-1s"), "2026-01-01T00:00:00.000Z");
      const next = makeBundle("proj-1", "production", "v-2");
      await stores().bundles.put(next, "2026-01-02T00:00:00.000Z");
      expect(await stores().bundles.get("proj-1", "production")).toStrictEqual({
        bundle: next,
        storedAt: "2026-01-02T00:00:00.000Z",
      });
      expect(await stores().bundles.version("proj-1", "production")).toBe("v-2");
      expect(await stores().bundles.version("proj-1", "staging")).toBe("v-1s");
      expect(await stores().bundles.list()).toHaveLength(2);
    });

    it("lists summaries ordered by project then env", async () => {
      const puts: [string, string, string][] = [
        ["proj-2", "production", "a"],
        ["proj-1", "staging", "b"],
        ["proj-1", "dev", "c"],
        ["proj-10", "dev", "d"],
      ];
      for (const [i, [projectId, env, version]] of puts.entries()) {
        await stores().bundles.put(makeBundle(projectId, env, version), `2026-01-01T00:00:0${i}.000Z`);
      }
      expect(await stores().bundles.list()).toStrictEqual([
        { orgId: "org-1", projectId: "proj-1", env: "dev", version: "c", storedAt: "2026-01-01T00:00:02.000Z" },
        { orgId: "org-1", projectId: "proj-1", env: "staging", version: "b", storedAt: "2026-01-01T00:00:01.000Z" },
        { orgId: "org-1", projectId: "proj-10", env: "dev", version: "d", storedAt: "2026-01-01T00:00:03.000Z" },
        { orgId: "org-1", projectId: "proj-2", env: "production", version: "a", storedAt: "2026-01-01T00:00:00.000Z" },
      ]);
    });
  });
}
