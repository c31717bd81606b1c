// Stands in for ajv in the Worker's bundle (scripts/build-edge.mjs): ajv compiles schemas with
// `new Function`, which Workers forbid, so the Worker hands the app its own schema compiler
// (schema-compiler.ts) and ajv's ~120 KB stay out. Constructing this is a wiring mistake.
export class Ajv2020 {
  constructor() {
    throw new Error("ajv cannot run in a Worker; the app must be given the edge's schema compiler");
  }
}
