// `vane import` and the admin API's import: the whole file checked (shape, keys, bundles, the
// stored versions, tenancy), then its keys and bundles written in one transaction.
import { type KeyInput, toKeyRecord } from "../auth/api-key.js";
import type { KeyRecord, Stores } from "../../store/types.js";
import { summaryOf } from "./bundle-operations.js";
import { type ImportPlan, checkImport, storeProblems } from "./import-checks.js";
import { type Imported, type OperationDependencies, publicKey } from "./operations.js";
import { refusedInput } from "./refusal.js";
import { tenancyProblems } from "./tenancy-checks.js";

export async function importFile(stores: Stores, raw: unknown, deps: OperationDependencies): Promise<Imported> {
  const { plan, problems } = checkImport(raw, await deps.engine(), deps.schemaCompiler);
  problems.push(...(await storeProblems(plan.bundles, stores.bundles)), ...(await tenancyProblems(plan, stores.bundles)));
  if (problems.length > 0) throw refusedInput(problems);
  return write(stores, plan, new Date(deps.now()).toISOString(), deps);
}

async function write(stores: Stores, plan: ImportPlan, now: string, deps: OperationDependencies): Promise<Imported> {
  if (stores.writeAll === undefined) throw new Error("this store cannot write keys and bundles in one transaction: no import");
  const keys = await Promise.all(plan.keys.map((input) => keyToWrite(stores, input, { now, deps })));
  const bundles = await Promise.all(plan.bundles.map(async ({ bundle }) => ({ bundle, previous: await stores.bundles.version(bundle.projectId, bundle.env) })));
  // All or nothing: a failure part way (a full disk) leaves the store as it was.
  await stores.writeAll({ keys: keys.map((k) => k.record), bundles: bundles.map((b) => b.bundle), storedAt: now });
  return {
    keys: keys.map(({ record, replaced }) => ({ key: publicKey(record), replaced })),
    bundles: bundles.map(({ bundle, previous }) => ({ stored: summaryOf(bundle, now), ...(previous !== undefined && { previous }) })),
  };
}

async function keyToWrite(stores: Stores, input: KeyInput, at: { now: string; deps: OperationDependencies }): Promise<{ record: KeyRecord; replaced: boolean }> {
  const fresh = toKeyRecord(input, at.deps.sha256, at.now);
  const existing = await stores.keys.byId(fresh.id);
  if (existing === undefined) return { record: fresh, replaced: false };
  // The file decides the key's fields; its history (first stored, first revoked) stays.
  const revoked = fresh.revokedAt !== undefined && { revokedAt: existing.revokedAt ?? fresh.revokedAt };
  return { record: { ...fresh, createdAt: existing.createdAt, ...revoked }, replaced: true };
}
