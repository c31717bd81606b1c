// The store contract, imports (Stores.writeAll, what `vane import` writes with): keys and bundles
// in one transaction, each bundle written only over the version the import's checks read, so a
// publication racing the import makes it write nothing at all; SQLite and PostgreSQL alike.
import { describe, expect, it } from "vitest";
import type { Stores } from "../../src/store/types.js";
import { makeBundle, makeKey } from "./fixtures.js";

const V1 = "2026-01-01T00:00:01.000Z";
const V2 = "2026-01-01T00:00:02.000Z";
const V3 = "2026-01-01T00:00:03.000Z";

export function describeImportContract(stores: () => Stores): void {
  describe("imports", () => {
    it("write nothing, keys included, when a bundle's stored version is no longer the one expected; all of it when it is", async () => {
      const { bundles, keys, writeAll } = stores();
      await bundles.put(makeBundle("proj-1", "production", V1), V1);
      await bundles.put(makeBundle("proj-1", "production", V2), V2); // published after the import read V1
      const file = { keys: [makeKey(1)], bundles: [makeBundle("proj-2", "production", V3), makeBundle("proj-1", "production", V3)], storedAt: V3 };
      expect(await writeAll!({ ...file, replacing: [undefined, V1] })).toBe(false);
      expect(await keys.byId(makeKey(1).id)).toBeUndefined();
      expect(await bundles.version("proj-2", "production")).toBeUndefined();
      expect(await bundles.version("proj-1", "production")).toBe(V2);
      expect(await writeAll!({ ...file, replacing: [undefined, V2] })).toBe(true);
      expect(await keys.byId(makeKey(1).id)).toStrictEqual(makeKey(1));
      expect(await bundles.version("proj-2", "production")).toBe(V3);
      expect(await bundles.version("proj-1", "production")).toBe(V3);
    });
  });
}
