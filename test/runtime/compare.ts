// What parity compares, and how a difference is reported. Both answers are the POST /v1/resolve
// 200 body; a local one carries its own decisionId and timestamp, so those are not compared.
// Answers are compared as JSON (an undefined field and an absent one are the same), since that
// is how the server's reaches a client.
import { isDeepStrictEqual } from "node:util";
import type { ParityFixture } from "./fixtures.js";
import type { Reply } from "./server-answers.js";

const LAYER_FIELDS = ["layerId", "bucket", "policyId", "allocationId", "allocationName", "attributionOnly"] as const;

interface Answer {
  assignments?: unknown;
  metadata: { unitKeyValue?: unknown; filteredContext?: unknown; configVersion?: unknown; layers?: Record<string, unknown>[] };
}

export interface Mismatch {
  /** The case's index in its fixture: replay it with the same seed. */
  readonly index: number;
  /** e.g. "assignments", "metadata.layers[3].bucket". */
  readonly field: string;
  readonly context: Record<string, unknown>;
  readonly parameters: readonly string[] | undefined;
  readonly server: unknown;
  readonly local: unknown;
  /** Both whole answers (a refusal: the server's reply and the local error). */
  readonly answers: { readonly server: unknown; readonly local: unknown };
}

/** Every differing field of every case (the first `limit` of them). */
export function findMismatches(fixture: ParityFixture, server: readonly unknown[], local: readonly unknown[], limit = 50): Mismatch[] {
  const found: Mismatch[] = [];
  if (local.length !== server.length) throw new Error(`${local.length} local answers for ${server.length} server answers`);
  for (let index = 0; index < server.length && found.length < limit; index++) {
    const { context, parameters } = fixture.cases[index]!;
    const answers = { server: server[index], local: local[index] };
    for (const [field, s, l] of differences(asJson(answers.server), asJson(answers.local))) {
      found.push({ index, field, context, parameters, server: s, local: l, answers });
    }
  }
  return found;
}

/**
 * Contexts a runtime resolved although the server refused them, or refused with another message.
 * `localErrors[i]` is the message the local resolve threw for refused context i, null if none.
 */
export function findRefusalMismatches(fixture: ParityFixture, server: readonly Reply[], localErrors: readonly (string | null)[]): Mismatch[] {
  return fixture.refused.flatMap((context, index): Mismatch[] => {
    const { status, body } = server[index]!;
    const error = (body as { error?: { code?: string; message?: string } }).error;
    const local = localErrors[index] ?? null;
    const same = status === 400 && error?.code === "BAD_REQUEST" && local !== null && local === error.message;
    const answers = { server: { status, body }, local };
    return same ? [] : [{ index, field: "refusal", context, parameters: undefined, server: answers.server, local, answers }];
  });
}

/** A failure message: each difference with its case, context and both values, then the first case's two answers in full. */
export function describeMismatches(runtime: string, fixture: ParityFixture, mismatches: readonly Mismatch[]): string {
  const show = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === "string" && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v));
  const shown = mismatches.slice(0, 10).map(({ answers: _answers, ...m }) => show(m));
  const first = mismatches[0];
  const whole = first === undefined ? [] : [`case ${first.index}, the server's answer: ${show(first.answers.server)}`, `case ${first.index}, the local answer: ${show(first.answers.local)}`];
  return [`${runtime} differs from the server on ${fixture.name} (the first ${mismatches.length} differences found; 10 shown):`, ...shown, ...whole].join("\n");
}

function asJson(answer: unknown): Answer {
  return JSON.parse(JSON.stringify(answer ?? null)) as Answer;
}

function* differences(server: Answer, local: Answer): Generator<[string, unknown, unknown]> {
  if (!isObject(server.metadata) || !isObject(local.metadata)) {
    yield ["metadata", server, local]; // not a resolve answer: nothing else can be compared
    return;
  }
  const fields: [string, unknown, unknown][] = [
    ["assignments", server.assignments, local.assignments],
    ["metadata.unitKeyValue", server.metadata.unitKeyValue, local.metadata.unitKeyValue],
    ["metadata.filteredContext", server.metadata.filteredContext, local.metadata.filteredContext],
    ["metadata.configVersion", server.metadata.configVersion, local.metadata.configVersion],
  ];
  for (const [field, s, l] of fields) if (!isDeepStrictEqual(s, l)) yield [field, s, l];
  const serverLayers = server.metadata.layers ?? [];
  const localLayers = local.metadata.layers ?? [];
  if (serverLayers.length !== localLayers.length) {
    yield ["metadata.layers", serverLayers, localLayers];
    return;
  }
  for (let i = 0; i < serverLayers.length; i++) {
    for (const field of LAYER_FIELDS) {
      const s = serverLayers[i]![field];
      const l = localLayers[i]![field];
      if (!isDeepStrictEqual(s, l)) yield [`metadata.layers[${i}].${field}`, s, l];
    }
  }
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}
