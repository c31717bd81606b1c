// The admin operations over the stores: what the admin routes run, and what the CLI runs on its
// own data folder, so both refuse and answer alike.
import type { Stores } from "../../store/types.js";
import { publishBundle, rollbackBundle } from "./bundle-operations.js";
import { type ReadEvents, countEvents, listEvents } from "./event-reads.js";
import { importFile } from "./import-operation.js";
import { createCheckedKey, revokeKeyById, rotateKeyById } from "./key-operations.js";
import { type AdminOperations, type OperationDependencies, publicKey } from "./operations.js";

/** `readEvents` answers the event reads: DuckDB's on Node (server/columnar-reads.ts), the store's own in a Worker. */
export function localOperations(stores: Stores, deps: OperationDependencies, readEvents: ReadEvents): AdminOperations {
  return {
    publishBundle: (raw, how) => publishBundle(stores, raw, how, deps),
    rollbackBundle: (where, version) => rollbackBundle(stores, { where, version }, deps),
    createKey: (request) => createCheckedKey(stores, request, deps),
    listKeys: async () => (await stores.keys.list()).map(publicKey),
    findKey: async (id) => {
      const key = await stores.keys.byId(id);
      return key && publicKey(key);
    },
    revokeKey: (id) => revokeKeyById(stores, id, deps),
    rotateKey: (id) => rotateKeyById(stores, id, deps),
    importFile: (raw) => importFile(stores, raw, deps),
    countEvents: (filter) => readEvents((reads) => countEvents(reads, filter)),
    listEvents: (filter) => readEvents((reads) => listEvents(reads, filter)),
    discoveredEvents: () => readEvents((reads) => reads.discovered()),
  };
}
