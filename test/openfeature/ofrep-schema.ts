// OFREP's own schemas (test/fixtures/ofrep/schemas.json, from the spec's openapi.yaml) as
// validators for the bodies Vane answers. One change to the spec's text, made here and not in
// the fixture: evaluationSuccess picks its value type with `oneOf`, which no body can pass (the
// `codeDefaultFlag` branch, `{}`, matches every body, and an integer matches both integerFlag and
// floatFlag), so it is read as `anyOf`. Formats (uri, date-time) are not checked.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";

const fixture = JSON.parse(readFileSync(new URL("../fixtures/ofrep/schemas.json", import.meta.url), "utf8")) as {
  components: { schemas: Record<string, Record<string, unknown>> };
};
const success = fixture.components.schemas.evaluationSuccess as { allOf: Record<string, unknown>[] };
const valueTypes = success.allOf[1]!;
success.allOf[1] = { anyOf: valueTypes.oneOf };

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema(fixture);

export type OfrepSchema = "serverEvaluationSuccess" | "bulkEvaluationSuccess" | "evaluationFailure" | "flagNotFound" | "bulkEvaluationFailure" | "sseEventData";

/** The schema's complaints about `body` ([] when it conforms). */
export function ofrepProblems(schema: OfrepSchema, body: unknown): string[] {
  const validate = ajv.getSchema(`ofrep-openapi#/components/schemas/${schema}`)!;
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`);
}
