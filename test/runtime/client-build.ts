// Where the built client is (`npm run build:client`, part of `npm run build` and so of
// `npm test`): the runtimes load that file, as users do, not the sources.
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const CLIENT_DIR = fileURLToPath(new URL("../../dist/client/", import.meta.url));
const CLIENT_FILES = ["vane-client.js", "vane.wasm", "vane-scalar.wasm"] as const;

/** The part of the client's API parity needs (the full one is in dist/client/vane-client.d.ts). */
export interface ParityClient {
  resolveLocal(context: Record<string, unknown>, parameters?: string[]): unknown;
  close(): Promise<void>;
}
export type CreateClient = (options: Record<string, unknown>) => Promise<ParityClient>;

/** The build's directory; throws, saying how to build it, when a file is missing. */
export function builtClientDir(): string {
  const missing = CLIENT_FILES.filter((file) => !existsSync(CLIENT_DIR + file));
  if (missing.length > 0) throw new Error(`dist/client lacks ${missing.join(", ")}: run npm run build`);
  return CLIENT_DIR;
}

/** createClient from the built file, for Node. */
export async function importBuiltClient(): Promise<CreateClient> {
  const module = (await import(pathToFileURL(builtClientDir() + "vane-client.js").href)) as { createClient: CreateClient };
  return module.createClient;
}
