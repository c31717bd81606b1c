// The store contract, bundle history (issues 19, 32): the versions put() and the learner's
// replace() published, newest first, each marked with who published it, and bounded per publisher.
import { describe, expect, it } from "vitest";
import { BUNDLE_HISTORY_LIMIT, type Stores } from "../../src/store/types.js";
import { makeBundle } from "./fixtures.js";

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

export function describeBundleHistoryContract(stores: () => Stores): void {
  describe("bundle history", () => {
    it("keeps every published version, newest first, each readable as published", async () => {
      const bundles = stores().bundles;
      const first = makeBundle("proj-1", "production", at(1));
      const second = { ...makeBundle("proj-1", "production", at(2)), savedGroups: { beta: ["u9"] } };
      await bundles.put(first, at(10));
      await bundles.put(makeBundle("proj-1", "staging", at(5)), at(11));
      await bundles.put(second, at(12));
      const history = await bundles.history("proj-1", "production");
      expect(history.map((h) => [h.version, h.storedAt, h.orgId, h.env])).toEqual([
        [at(2), at(12), "org-1", "production"],
        [at(1), at(10), "org-1", "production"],
      ]);
      expect(await bundles.historyVersion("proj-1", "production", at(1))).toStrictEqual({ bundle: first, storedAt: at(10) });
      expect(await bundles.historyVersion("proj-1", "production", at(2))).toStrictEqual({ bundle: second, storedAt: at(12) });
      expect(await bundles.historyVersion("proj-1", "production", at(5))).toBeUndefined();
      expect((await bundles.history("proj-1", "staging")).map((h) => h.version)).toEqual([at(5)]);
      expect(await bundles.history("proj-2", "production")).toEqual([]);
    });

    it("keeps each env's first publication through every later put and the learner's replacements", async () => {
      const bundles = stores().bundles;
      const firsts = async () => (await bundles.firstPublications()).sort((a, b) => a.env.localeCompare(b.env));
      expect(await bundles.firstPublications()).toEqual([]);
      expect(await bundles.put(makeBundle("proj-1", "production", at(1)), at(9), at(0))).toBe(false); // a compare and set that stored nothing
      expect(await bundles.firstPublications()).toEqual([]);
      await bundles.put(makeBundle("proj-1", "production", at(1)), at(10));
      await bundles.put(makeBundle("proj-1", "staging", at(2)), at(11));
      await bundles.put(makeBundle("proj-1", "production", at(3)), at(12));
      expect(await bundles.replace(makeBundle("proj-1", "production", at(4)), at(13), at(3))).toBe(true);
      await bundles.put(makeBundle("proj-1", "production", at(1)), at(14)); // the first version again
      expect(await firsts()).toEqual([
        { orgId: "org-1", projectId: "proj-1", env: "production", storedAt: at(10) },
        { orgId: "org-1", projectId: "proj-1", env: "staging", storedAt: at(11) },
      ]);
    });

    it("lists a version published again once, at the front", async () => {
      const bundles = stores().bundles;
      await bundles.put(makeBundle("proj-1", "production", at(1)), at(10));
      await bundles.put(makeBundle("proj-1", "production", at(2)), at(11));
      await bundles.put(makeBundle("proj-1", "production", at(1)), at(12));
      expect((await bundles.history("proj-1", "production")).map((h) => h.version)).toEqual([at(1), at(2)]);
    });

    it("records the learner's replacements, marked as the learner's, and only those that replaced", async () => {
      const bundles = stores().bundles;
      await bundles.put(makeBundle("proj-1", "production", at(1)), at(10));
      const learned = { ...makeBundle("proj-1", "production", at(2)), savedGroups: { learned: ["u1"] } };
      expect(await bundles.replace(learned, at(11), at(1))).toBe(true);
      expect(await bundles.replace(makeBundle("proj-1", "production", at(3)), at(12), at(1))).toBe(false); // a stale compare and set
      expect(await bundles.version("proj-1", "production")).toBe(at(2));
      expect((await bundles.history("proj-1", "production")).map((h) => [h.version, h.storedAt, h.by])).toEqual([
        [at(2), at(11), "learner"],
        [at(1), at(10), "operator"],
      ]);
      expect(await bundles.historyVersion("proj-1", "production", at(2))).toStrictEqual({ bundle: learned, storedAt: at(11) });
    });

    it("puts over an expected version only while it is still the stored one: a put that lost the race stores nothing, history included", async () => {
      const bundles = stores().bundles;
      await bundles.put(makeBundle("proj-1", "production", at(1)), at(10));
      const mine = { ...makeBundle("proj-1", "production", at(2)), savedGroups: { mine: ["u1"] } };
      expect(await bundles.put(mine, at(11), at(1))).toBe(true);
      // Made from at(1) too, by another publisher: at(2) is stored now, so it would undo it.
      expect(await bundles.put(makeBundle("proj-1", "production", at(3)), at(12), at(1))).toBe(false);
      expect(await bundles.get("proj-1", "production")).toStrictEqual({ bundle: mine, storedAt: at(11) });
      expect((await bundles.history("proj-1", "production")).map((h) => h.version)).toEqual([at(2), at(1)]);
      // Nothing stored yet is not the version expected either; without one, a put stores.
      expect(await bundles.put(makeBundle("proj-1", "staging", at(3)), at(12), at(1))).toBe(false);
      expect(await bundles.version("proj-1", "staging")).toBeUndefined();
      expect(await bundles.put(makeBundle("proj-1", "staging", at(3)), at(12))).toBe(true);
      expect(await bundles.version("proj-1", "staging")).toBe(at(3));
    });

    it("puts a first bundle expecting none stored only while none is: two first publications racing store one", async () => {
      const bundles = stores().bundles;
      const first = { ...makeBundle("proj-1", "qa", at(1)), savedGroups: { first: ["u1"] } };
      expect(await bundles.put(first, at(10), null)).toBe(true);
      // Checked against an empty env too, by another publisher: it would replace the first.
      expect(await bundles.put(makeBundle("proj-1", "qa", at(2)), at(11), null)).toBe(false);
      expect(await bundles.get("proj-1", "qa")).toStrictEqual({ bundle: first, storedAt: at(10) });
      expect((await bundles.history("proj-1", "qa")).map((h) => h.version)).toEqual([at(1)]);
    });

    it(`keeps the newest ${BUNDLE_HISTORY_LIMIT} of the learner's apart: they never push out an operator's`, async () => {
      const bundles = stores().bundles;
      await bundles.put(makeBundle("proj-1", "production", at(0)), at(0));
      for (let i = 1; i <= BUNDLE_HISTORY_LIMIT + 2; i++) expect(await bundles.replace(makeBundle("proj-1", "production", at(i)), at(i), at(i - 1))).toBe(true);
      const history = await bundles.history("proj-1", "production");
      expect(history.filter((h) => h.by === "learner")).toHaveLength(BUNDLE_HISTORY_LIMIT);
      expect(history[0]!.version).toBe(at(BUNDLE_HISTORY_LIMIT + 2));
      expect(history.filter((h) => h.by === "operator").map((h) => h.version)).toEqual([at(0)]);
      expect(await bundles.historyVersion("proj-1", "production", at(2))).toBeUndefined();
    });

    it(`keeps the newest ${BUNDLE_HISTORY_LIMIT} versions of a project and env`, async () => {
      const bundles = stores().bundles;
      for (let i = 0; i < BUNDLE_HISTORY_LIMIT + 3; i++) await bundles.put(makeBundle("proj-1", "production", at(i)), at(i));
      const history = await bundles.history("proj-1", "production");
      expect(history).toHaveLength(BUNDLE_HISTORY_LIMIT);
      expect(history[0]!.version).toBe(at(BUNDLE_HISTORY_LIMIT + 2));
      expect(history.at(-1)!.version).toBe(at(3));
      expect(await bundles.historyVersion("proj-1", "production", at(2))).toBeUndefined();
    });
  });
}
