// What a decision of POST /v1/decide writes, as text built straight from it: the decision events'
// log row (the compact row of log-row.ts) and the answer. Each equals, byte for byte, the
// JSON.stringify of the objects it replaces (encodeLogRow of decide.ts's decideEvent, and the
// answer object the route built before; test/server/decide-texts.test.ts holds them equal over random bundles,
// contexts and tenants): the assignments and filtered context are serialized once for both, and
// what a bundle version fixes (each arm's layer, policy and allocation fields) once per version.
import type { Decision } from "../adaptive/decide.js";
import type { CompiledAllocation } from "../bundle/compile.js";
import { type SharedParts, type VersionTexts, quotedTime } from "./resolve-texts.js";
import { type PiecesRow, TextPieces } from "./text-pieces.js";
import { LOG_FORMAT_COMPACT } from "../store/log-row.js";

export interface Decided {
  readonly decision: Decision;
  readonly decisionId: string;
}

/** What one request's decisions share: their tenant, the bundle version, time and latency. */
export interface DecideSource {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly version: string;
  /** ISO 8601 time of the decisions: each event's timestamp and receivedAt. */
  readonly timestamp: string;
  readonly latencyMs: number;
}

/** An arm's fixed texts, around the request's values. */
interface ArmTexts {
  /** `{"layerId":…,"bucket":` */
  readonly layerHead: string;
  /** `,"policyId":…,"policyKey":…,"allocationId":…,"allocationName":…,"allocationKey":…,"probability":` */
  readonly layerTail: string;
  /** `,"policyId":…,"policyKey":…,"layerId":…,"allocationId":…,"allocationKey":…,"allocationName":…,"assignments":` */
  readonly answerHead: string;
  /** The arm's assignments as JSON: its layer's defaults with its overrides, fixed in a bundle version (adaptive/decide.ts armAssignments). */
  readonly assignments: string;
}

/** By the compiled allocation: one per arm of a policy in a bundle version. */
const armTexts = new WeakMap<CompiledAllocation, ArmTexts>();

function armOf(decision: Decision): ArmTexts {
  const { policy } = decision;
  const allocation = policy.compiled.allocations[decision.arm]!;
  let texts = armTexts.get(allocation);
  if (texts === undefined) {
    const policyFields = `,"policyId":${JSON.stringify(policy.id)},"policyKey":${JSON.stringify(policy.key)}`;
    const layerId = JSON.stringify(policy.layer.id);
    const [id, name, key] = [JSON.stringify(allocation.id), JSON.stringify(allocation.name), JSON.stringify(allocation.key)];
    texts = {
      layerHead: `{"layerId":${layerId},"bucket":`,
      layerTail: `${policyFields},"allocationId":${id},"allocationName":${name},"allocationKey":${key},"probability":`,
      answerHead: `${policyFields},"layerId":${layerId},"allocationId":${id},"allocationKey":${key},"allocationName":${name},"assignments":`,
      assignments: JSON.stringify(decision.assignments),
    };
    armTexts.set(allocation, texts);
  }
  return texts;
}

/** What a decision's row and answer share: its arm's assignments, quoted once per version; its filtered context. */
export function decisionParts(decision: Decision): SharedParts {
  const filtered = decision.filteredContext;
  return { assignments: armOf(decision).assignments, filteredContext: filtered === undefined ? undefined : JSON.stringify(filtered) };
}

/** The pieces of this module's texts (text-pieces.ts). */
const pieces = new TextPieces();
/** A decision row's: the row crosses to the log writer as its pieces (PiecesRow), while the answer is built. */
const rowPieces = new TextPieces();

/** The compact log row of the decisions' events, whose ids are `eventIds`, in order. */
export function decisionRow(texts: VersionTexts, decided: readonly Decided[], parts: readonly SharedParts[], eventIds: readonly string[], source: DecideSource): PiecesRow {
  const timestamp = quotedTime(source.timestamp);
  const latency = JSON.stringify(source.latencyMs);
  const tenant = texts.tenantTail(source.orgId, source.projectId, source.env, source.version);
  rowPieces.push("[", timestamp);
  for (let i = 0; i < decided.length; i++) {
    const { decision, decisionId } = decided[i]!;
    const arm = armOf(decision);
    const part = parts[i]!;
    rowPieces.push(",[");
    rowPieces.quotedId(eventIds[i]!);
    rowPieces.push(',{"type":"decision","unitKey":');
    rowPieces.quoted(decision.unit);
    rowPieces.push(',"timestamp":', timestamp, ',"assignments":', part.assignments);
    rowPieces.push(',"layers":[', arm.layerHead, JSON.stringify(decision.bucket), arm.layerTail, JSON.stringify(decision.probability), '}],"latencyMs":', latency);
    rowPieces.push(',"decisionId":');
    rowPieces.quotedId(decisionId);
    rowPieces.push(tenant);
    if (decision.entityId !== undefined) rowPieces.push(',"entityId":', JSON.stringify(decision.entityId));
    if (decision.features !== undefined) rowPieces.push(',"features":', JSON.stringify(Array.from(decision.features)));
    if (part.filteredContext !== undefined) rowPieces.push(',"filteredContext":', part.filteredContext);
    rowPieces.push("}]");
  }
  rowPieces.push("]");
  return rowPieces.row(LOG_FORMAT_COMPACT);
}

/** One decision's answer (decisions.md §6), as JSON. */
export function decideAnswer({ decision, decisionId }: Decided, parts: SharedParts, version: string, timestamp: string): string {
  pushAnswer(decision, decisionId, parts, version, timestamp);
  return pieces.join();
}

/** POST /v1/decide/batch's answer: each item's decision, or its error, in order. */
export function batchAnswer(outcomes: readonly (Decided | { readonly error: unknown })[], parts: readonly SharedParts[], version: string, timestamp: string): string {
  pieces.push('{"results":[');
  let decided = 0;
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!;
    if (i > 0) pieces.push(",");
    if ("decision" in outcome) pushAnswer(outcome.decision, outcome.decisionId, parts[decided++]!, version, timestamp);
    else pieces.push(JSON.stringify(outcome));
  }
  pieces.push("]}");
  return pieces.join();
}

function pushAnswer(decision: Decision, decisionId: string, parts: SharedParts, version: string, timestamp: string): void {
  const arm = armOf(decision);
  pieces.push('{"decisionId":');
  pieces.quotedId(decisionId);
  pieces.push(arm.answerHead, parts.assignments, ',"probability":', JSON.stringify(decision.probability));
  // The bundle version and the learned state's revision: either changing may change the arm.
  pieces.push(',"stateVersion":', JSON.stringify(`${version}#${decision.stateRevision}`), ',"metadata":{"timestamp":', quotedTime(timestamp), ',"unitKeyValue":');
  pieces.quoted(decision.unit);
  if (decision.entityId !== undefined) pieces.push(',"entityId":', JSON.stringify(decision.entityId));
  pieces.push(',"bucket":', JSON.stringify(decision.bucket), ',"algorithm":', JSON.stringify(decision.algorithm));
  if (parts.filteredContext !== undefined) pieces.push(',"filteredContext":', parts.filteredContext);
  pieces.push("}}");
}
