// A resolve whose context holds a lone UTF-16 surrogate (valid JSON: "\ud800") is answered and its
// decision event stored, as the contract asks; the Parquet archive goes on past it. DuckDB's JSON
// reader refuses such a string, and one such decision failed every delivery holding it, so the
// archive (and the results read from it) stopped there for every tenant. (POST /v1/events refuses
// an event holding one: event-batch.ts.) Over real HTTP to `vane serve`, with the copy's own process.
import { describe, expect, it } from "vitest";
import { tempDir } from "../cli/helpers.js";
import { serveProcess } from "../cli/serve-process.js";
import { parquetRows } from "../store/parquet-files.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the Parquet archive and a lone surrogate", () => {
  it("archives a decision whose unit holds one (U+FFFD in its place) and every event after it", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--log-level", "silent"]);
    try {
      const resolve = async (userId: string) => {
        const response = await fetch(`${served.url}/v1/resolve`, { method: "POST", headers: { Authorization: `Bearer ${served.sk}`, "Content-Type": "application/json" }, body: JSON.stringify({ context: { userId, country: "NL" } }) });
        expect(response.status).toBe(200);
        return (await response.json()) as { decisionId: string; metadata: { unitKeyValue: string } };
      };
      const lone = await resolve("user-\ud800");
      expect(lone.metadata.unitKeyValue).toBe("user-\ud800");
      for (let i = 0; i < 5; i++) await resolve(`user-${i}`);

      let decisions: Record<string, unknown>[] = [];
      for (let waited = 0; decisions.length < 6 && waited < 60_000; waited += 200) {
        await sleep(200);
        decisions = (await parquetRows(dataDir)).filter((row) => row.type === "decision");
      }
      expect(decisions.map((row) => row.unit_key).sort()).toEqual(["user-0", "user-1", "user-2", "user-3", "user-4", "user-\ufffd"]);
      const archived = decisions.find((row) => row.decision_id === lone.decisionId)!;
      expect((JSON.parse(archived.body as string) as { unitKey: string }).unitKey).toBe("user-\ufffd");
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
  }, 90_000);
});
