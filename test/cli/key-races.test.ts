// Key revocation racing a rotation of the same key, over the admin API of `vane serve` (two
// operators, or a rotation job while someone revokes a leaked key): a revocation answered 200
// must hold, whatever order the store saw the two in; the old secret is refused from then on.
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

const TOKEN = "admin-token-for-tests-0123456789abcdef";
const KEYS = 12;

describe("a key revoked while it is being rotated", () => {
  it("stays revoked: its secret gets 401, and the rotation either came first or was refused as of a revoked key", async () => {
    const served = await serveProcess(tempDir(), ["--admin-token", TOKEN]);
    const admin = async (path: string, body?: unknown) => {
      const headers = { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" };
      const answer = await fetch(`${served.url}/admin/v1/${path}`, { method: body === undefined ? "GET" : "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: answer.status, body: (await answer.json()) as any };
    };
    for (let i = 0; i < KEYS; i++) {
      const created = await admin("keys", { orgId: "demo-org", projectId: "demo", scopes: ["sdk:read"] });
      const { id } = created.body.key;
      // Both at once, as two operators' requests arrive.
      const [rotation, revocation] = await Promise.all([admin(`keys/${id}/rotate`, {}), admin(`keys/${id}/revoke`, {})]);
      expect(revocation).toMatchObject({ status: 200, body: { alreadyRevoked: false } });
      expect((await admin(`keys/${id}`)).body.key.revokedAt).toBe(revocation.body.key.revokedAt);
      const oldSecret = await fetch(`${served.url}/v1/config/demo`, { headers: { Authorization: `Bearer ${created.body.secret}` } });
      expect({ key: i, status: oldSecret.status }).toEqual({ key: i, status: 401 });
      if (rotation.status === 201) {
        // The rotation came first: its replacement works, as a rotation's does.
        expect((await fetch(`${served.url}/v1/config/demo`, { headers: { Authorization: `Bearer ${rotation.body.secret}` } })).status).toBe(200);
      } else {
        expect(rotation).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining("a revoked key is not rotated") } } });
      }
    }
  }, 120_000);
});
