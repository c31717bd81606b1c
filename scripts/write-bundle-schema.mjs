// Writes schema/bundle.schema.json (shipped in the package, for editors) from the compiled
// src/bundle/schema.ts. Run after build:ts; test/bundle/schema.test.ts checks the file is current.
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { BUNDLE_SCHEMA } = await import(join(root, "dist/bundle/schema.js"));
writeFileSync(join(root, "schema/bundle.schema.json"), `${JSON.stringify(BUNDLE_SCHEMA, null, 2)}\n`);
