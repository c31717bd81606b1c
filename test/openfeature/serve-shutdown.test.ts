// `vane serve` with an open change stream: SIGTERM ends the stream and the process exits, rather
// than waiting forever for a listener that never leaves (server.close waits for open responses).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveProcess } from "../cli/serve-process.js";
import { openSse, waitFor } from "./sse-reader.js";

const dataDir = mkdtempSync(join(tmpdir(), "vane-serve-sse-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("vane serve with open event streams", () => {
  it("stops on SIGTERM, ending its streams", async () => {
    const served = await serveProcess(dataDir);
    const reader = await openSse(`${served.url}/ofrep/v1/changes/demo?env=production`, { Authorization: `Bearer ${served.sk}` });
    expect(reader.status).toBe(200);
    await waitFor(() => reader.raw.length > 0, "the stream to open");
    let exit: { code: number | null } | undefined;
    void served.exited.then((how) => (exit = how));
    served.child.kill("SIGTERM");
    await waitFor(() => exit !== undefined, "the server to exit");
    expect(exit!.code).toBe(0);
    reader.close();
  }, 60_000);
});
