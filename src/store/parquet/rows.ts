// The column layout of the Parquet event files, and their encoding. One explicit schema, so every
// file has the same columns and types whatever its rows hold (type inference would make a file with
// no `name` values a different schema from one with some).
import { parquetWriteBuffer, type ColumnSource, type SchemaElement } from "hyparquet-writer";
import type { SequencedEvent } from "../types.js";
import { storedEventTimeMs } from "../event-time.js";
import { receivedAtMillis } from "./partitions.js";

const UTF8 = { type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } } as const;

function required(name: string): SchemaElement {
  return { name, ...UTF8, repetition_type: "REQUIRED" };
}

function optional(name: string): SchemaElement {
  return { name, ...UTF8, repetition_type: "OPTIONAL" };
}

/** A LayerAssignment's text fields the `layers` column keeps (then `probability` and `attributionOnly`). */
const LAYER_TEXT = ["layerId", "policyId", "policyKey", "allocationId", "allocationKey"] as const;

/** The files' schema: element 0 is the root, the rest are the columns in order. */
export const EVENT_SCHEMA: readonly SchemaElement[] = [
  { name: "root", num_children: 16 },
  { name: "seq", type: "INT64", repetition_type: "REQUIRED" },
  required("id"),
  {
    name: "received_at",
    type: "INT64",
    repetition_type: "REQUIRED",
    converted_type: "TIMESTAMP_MILLIS",
    logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
  },
  required("org_id"),
  required("project_id"),
  required("env"),
  required("type"),
  required("unit_key"),
  // The event's own timestamp, kept as the client sent it: it may carry an offset or precision
  // that a conversion to millis would lose.
  required("event_timestamp"),
  optional("name"),
  optional("decision_id"),
  // JSON text in a plain string column, which every warehouse reads; its JSON functions parse it.
  required("body"),
  // Whether a track event's name matched no event definition (absent when the event did not say):
  // `vane events discovered` counts these. Last, so files written before it keep every other column's place.
  { name: "discovered", type: "BOOLEAN", repetition_type: "OPTIONAL" },
  // When the event happened on the server's clock (store/event-time.ts): what analysis orders by.
  {
    name: "event_time",
    type: "INT64",
    repetition_type: "OPTIONAL",
    converted_type: "TIMESTAMP_MILLIS",
    logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
  },
  // What the analysis reads of a body, so that it parses no JSON (columnar/event-table.ts derives
  // them alike wherever DuckDB writes): an exposure's or decision's layer assignments, and a track
  // event's numeric value.
  { name: "layers", repetition_type: "OPTIONAL", converted_type: "LIST", logical_type: { type: "LIST" }, num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  { name: "element", repetition_type: "OPTIONAL", num_children: LAYER_TEXT.length + 2 },
  ...LAYER_TEXT.map(optional),
  { name: "probability", type: "DOUBLE", repetition_type: "OPTIONAL" },
  { name: "attributionOnly", type: "BOOLEAN", repetition_type: "OPTIONAL" },
  { name: "value", type: "DOUBLE", repetition_type: "OPTIONAL" },
];

/** The rows of one file as columns, in EVENT_SCHEMA's order. */
export function eventColumns(rows: readonly SequencedEvent[]): ColumnSource[] {
  const column = <T>(name: string, pick: (row: SequencedEvent) => T): ColumnSource => ({
    name,
    data: rows.map(pick),
  });
  return [
    column("seq", (r) => BigInt(r.seq)),
    column("id", (r) => r.event.id),
    column("received_at", (r) => receivedAtMillis(r)),
    column("org_id", (r) => r.event.orgId),
    column("project_id", (r) => r.event.projectId),
    column("env", (r) => r.event.env),
    column("type", (r) => r.event.type),
    column("unit_key", (r) => r.event.unitKey),
    column("event_timestamp", (r) => r.event.timestamp),
    column("name", (r) => r.event.name ?? null),
    column("decision_id", (r) => r.event.decisionId ?? null),
    column("body", (r) => JSON.stringify(r.event.body)),
    column("discovered", (r) => r.event.discovered ?? null),
    column("event_time", (r) => BigInt(storedEventTimeMs(r.event.body, r.event.timestamp, Number(receivedAtMillis(r))))),
    column("layers", (r) => (r.event.type === "track" ? null : layersOf(r.event.body.layers))),
    column("value", (r) => (r.event.type === "track" && typeof r.event.body.value === "number" ? r.event.body.value : null)),
  ];
}

/** The `layers` column's value for a body's `layers`, as DuckDB's json_transform makes it (event-table.ts). */
function layersOf(layers: unknown): Record<string, unknown>[] | null {
  if (!Array.isArray(layers)) return null;
  return layers.map((layer: unknown) => {
    const fields = (typeof layer === "object" && layer !== null ? layer : {}) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const name of LAYER_TEXT) out[name] = textOf(fields[name]);
    out.probability = typeof fields.probability === "number" ? fields.probability : null;
    out.attributionOnly = typeof fields.attributionOnly === "boolean" ? fields.attributionOnly : null;
    return out;
  });
}

function textOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * One Parquet file holding `rows`, in JavaScript: the edge's writer (a Worker cannot load DuckDB,
 * which writes the files wherever Node runs: duck-writer.ts). Snappy (the writer's built-in, pure
 * JS, and what warehouses expect by default), a single row group (one delivery's rows of one partition).
 */
export function encodeEvents(rows: readonly SequencedEvent[]): Uint8Array {
  const buffer = parquetWriteBuffer({
    columnData: eventColumns(rows),
    schema: [...EVENT_SCHEMA],
    codec: "SNAPPY",
    rowGroupSize: Math.max(rows.length, 1),
    createdBy: "vane",
  });
  return new Uint8Array(buffer);
}
