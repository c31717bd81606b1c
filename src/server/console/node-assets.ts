// The Node host's console files: dist/console/ of the package, as scripts/build-console.mjs wrote
// them (the same folder whether the server runs from src/ through tsx or from dist/).
import { readFile } from "node:fs/promises";
import type { AssetReader } from "./assets.js";

const FOLDER = new URL("../../../dist/console/", import.meta.url);

export const nodeConsoleAssets: AssetReader = (name) =>
  readFile(new URL(name, FOLDER)).then(
    (bytes) => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    () => undefined,
  );
