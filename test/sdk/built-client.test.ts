// The distributed file, not the sources: dist/client/vane-client.js (npm run build makes it)
// loads its engine from the .wasm beside it, resolves as the server does, sends its exposures,
// refuses a bootstrap that is not a bundle (its lighter bundle check), leaves out the engine's
// batch hashing and bandits, and its declarations
// type-check on their own (no Node types) for a user's code.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as Sdk from "../../src/sdk/index.js";
import { DEMO_PROJECT, FetchLog, type SdkServer, VERSION_1, demoBundle, startSdkServer } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

const BUILT = fileURLToPath(new URL("../../dist/client/vane-client.js", import.meta.url));
let sdk: SdkServer;
let built: typeof Sdk;

beforeAll(async () => {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run npm run build first`);
  built = (await import(BUILT)) as typeof Sdk;
  sdk = await startSdkServer();
});
afterAll(() => sdk.server.close());

describe("dist/client/vane-client.js", () => {
  it("loads the engine beside it, resolves like the server, and sends the exposure", async () => {
    const errors: unknown[] = [];
    const options = { baseUrl: sdk.server.url, apiKey: sdk.sk, projectId: DEMO_PROJECT, now: () => sdk.server.clock.now(), onError: (e: unknown) => errors.push(e) };
    const local = await built.createClient(options);
    const remote = await built.createClient({ ...options, mode: "server" });
    const context = { userId: "built-1", country: "US", accountId: "acct-b" };
    const mine = local.resolveLocal(context);
    const theirs = await remote.resolve(context);
    expect(mine.metadata.configVersion).toBe(VERSION_1);
    expect({ ...mine, decisionId: "", metadata: { ...mine.metadata, timestamp: "" } }).toStrictEqual({
      ...theirs,
      decisionId: "",
      metadata: { ...theirs.metadata, timestamp: "" },
    });
    await local.close();
    await remote.close();
    const exposures = await loggedEvents(sdk.server.stores.events).list({ type: "exposure" });
    expect(exposures.map((e) => e.event.decisionId)).toEqual([mine.decisionId, mine.decisionId]);
    expect(errors).toEqual([]);
  });

  it("refuses a bootstrap that is not a bundle, naming what is wrong", async () => {
    const log = new FetchLog();
    const bootstrap = { ...demoBundle(VERSION_1), layers: [{ id: "checkout" }] } as unknown as Sdk.Bundle;
    const creating = built.createClient({ baseUrl: sdk.server.url, apiKey: sdk.pk, projectId: DEMO_PROJECT, bootstrap, fetch: log.fetch });
    await expect(creating).rejects.toThrow("layers[0]: must be an object with an id and policies");
    expect(log.calls).toEqual([]);
  });

  it("carries the engine's one-unit hashing only: not its batch hashing nor the bandits (the server's)", () => {
    const text = readFileSync(BUILT, "utf8");
    expect(text).not.toContain("units must be an array"); // BatchBucketEngine.bucketUnits
    expect(text).not.toContain("arms must be LinearArms"); // Engine's bandits
  });

  it("has declarations a user's TypeScript checks against, without Node's types", () => {
    const dir = mkdtempSync(join(tmpdir(), "vane-client-types-"));
    try {
      const file = join(dir, "user.mts");
      writeFileSync(
        file,
        `import { createClient, VaneError, type Bundle, type ClientOptions, type ResolveResult, type VaneClient } from ${JSON.stringify(BUILT)};
const options: ClientOptions = { baseUrl: "https://vane.example", apiKey: "vane_pk_x", projectId: "p", mode: "server", flushAt: 10 };
const client: VaneClient = await createClient(options);
const result: ResolveResult = client.resolveLocal({ userId: "u" }, ["a.b"]);
const name: string | undefined = result.metadata.layers[0]?.allocationName;
const color: string = client.getString("checkout.buttonColor", "blue", { userId: "u" });
const on: boolean = client.getBoolean("checkout.oneClick", false, { userId: "u" });
const reason: "SPLIT" | "DEFAULT" | "ERROR" = client.details("k", 1, {}).reason;
const unsubscribe: () => void = client.onChange((version: string) => version.length);
// @ts-expect-error a boolean default asks for a boolean
const wrong: string = client.getBoolean("k", false, {});
client.track("click", { value: 1, properties: { name } });
const bundle: Bundle | undefined = undefined;
const failed: boolean = new VaneError("m", 503, "SERVICE_UNAVAILABLE").status === 503;
// @ts-expect-error mode is "local" or "server"
await createClient({ ...options, mode: "edge" });
// @ts-expect-error resolve takes a context object
await client.resolve("user-1");
export { bundle, failed, color, on, reason, unsubscribe, wrong };
`,
      );
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
        types: [],
        skipLibCheck: false,
      });
      const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      expect(diagnostics).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
