// `vane import` and the admin API's import: the whole file checked (shape, keys, bundles, the
// stored versions, tenancy), then its keys and bundles written in one transaction.
import { type KeyInput, toKeyRecord } from "../auth/api-key.js";
import type { KeyRecord, Stores } from "../../store/types.js";
import { PUT_ATTEMPTS, summaryOf } from "./bundle-operations.js";
import { type ImportPlan, checkImport, storeProblems } from "./import-checks.js";
import { type Imported, type OperationDependencies, publicKey } from "./operations.js";
import { AdminRefusal, refusedInput } from "./refusal.js";
import { tenancyProblems } from "./tenancy-checks.js";

export async function importFile(stores: Stores, raw: unknown, deps: OperationDependencies): Promise<Imported> {
  const { plan, problems } = checkImport(raw, await deps.engine(), deps.schemaCompiler);
  for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
    // The stored versions are read before the checks and the write goes only over them: a
    // publication racing the import makes it write nothing, and it is checked again.
    const previous = await Promise.all(plan.bundles.map(({ bundle }) => stores.bundles.version(bundle.projectId, bundle.env)));
    const every = [...problems, ...(await storeProblems(plan.bundles, stores.bundles)), ...(await tenancyProblems(plan, stores.bundles))];
    if (every.length > 0) throw refusedInput(every);
    const written = await write(stores, { plan, previous }, new Date(deps.now()).toISOString(), deps);
    if (written !== undefined) return written;
  }
  throw new AdminRefusal("BAD_REQUEST", `the file's bundles were published by someone else ${PUT_ATTEMPTS} times while it was checked; nothing was written, try again`);
}

/** What the import stored; undefined when a bundle's stored version moved from `previous` (nothing written). */
async function write(stores: Stores, checked: { plan: ImportPlan; previous: (string | undefined)[] }, now: string, deps: OperationDependencies): Promise<Imported | undefined> {
  if (stores.writeAll === undefined) throw new Error("this store cannot write keys and bundles in one transaction: no import");
  const { plan, previous } = checked;
  const keys = await Promise.all(plan.keys.map((input) => keyToWrite(stores, input, { now, deps })));
  const bundles = plan.bundles.map(({ bundle }, i) => ({ bundle, previous: previous[i] }));
  // All or nothing: a failure part way (a full disk) leaves the store as it was.
  if (!(await stores.writeAll({ keys: keys.map((k) => k.record), bundles: bundles.map((b) => b.bundle), replacing: previous, storedAt: now }))) return undefined;
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
