// What a resolution writes, as text built straight from it: the decision event's log row (the
// compact row of log-row.ts) and POST /v1/resolve's answer. Each equals, byte for byte, the
// JSON.stringify of the objects it replaces (encodeLogRow of decisionEvent's event, and
// resolveResponse's body; test/server/resolve-texts.test.ts holds them equal over random bundles
// and contexts): the assignments and filtered context are serialized once for both, and what a
// bundle version fixes (each layer's outcome after its bucket, the tenant's fields) is written
// once per version. The row's pieces that a version fixes, and its own keys, carry their UTF-8
// bytes (encoded-text.ts): the log writer's ring copies them as they are.
import type { LayerResolution, Resolution } from "../bundle/resolve.js";
import { SUGGESTED_REFRESH_MS } from "../bundle/response.js";
import type { Bundle } from "../bundle/types.js";
import type { DecisionSource } from "./decision-event.js";
import { EncodedText } from "./encoded-text.js";
import { type Piece, type PiecesRow, TextPieces } from "./text-pieces.js";
import { LOG_FORMAT_COMPACT } from "../store/log-row.js";

/** The parts of a resolution both texts hold, serialized once. */
export interface SharedParts {
  readonly assignments: string;
  /** undefined when the resolution has no filtered context. */
  readonly filteredContext: string | undefined;
  /** The assignments with their bytes, when a version keeps their text (VersionTexts.sharedParts). */
  readonly encodedAssignments?: EncodedText;
}

/** Of a resolution, or of a decision of POST /v1/decide (decide-texts.ts). */
export function sharedParts(resolved: Pick<Resolution, "assignments" | "filteredContext">): SharedParts {
  const filtered = resolved.filteredContext;
  return { assignments: JSON.stringify(resolved.assignments), filteredContext: filtered === undefined ? undefined : JSON.stringify(filtered) };
}

/** What follows a layer's bucket, in the decision event and in the answer, for one outcome of the layer. */
interface LayerTail {
  readonly event: EncodedText;
  readonly answer: string;
}

/** A layer's heads and tails: by policy id, then allocation id ("" for none), each as served and as attribution only. */
interface LayerTails {
  /** `{"layerId":…,"bucket":`, and the same after a comma. */
  readonly head: EncodedText;
  readonly nextHead: EncodedText;
  readonly byOutcome: Map<string, Map<string, readonly [served: LayerTail, attribution: LayerTail]>>;
}

/**
 * A decision's ISO time as JSON, remembered for the last time asked: the decisions of one
 * millisecond share it (decision-event.ts isoTime), and the row and the answer both write it.
 */
export function quotedTime(timestamp: string): string {
  if (timestamp !== lastTime) {
    lastQuoted = JSON.stringify(timestamp);
    lastTime = timestamp;
  }
  return lastQuoted;
}

let lastTime = "";
let lastQuoted = '""';

/** The decision row's own keys, with their bytes. */
const TYPE_UNIT_KEY = new EncodedText(',{"type":"decision","unitKey":');
const TIMESTAMP = new EncodedText(',"timestamp":');
const ASSIGNMENTS = new EncodedText(',"assignments":');
const LAYERS = new EncodedText(',"layers":[');
const LATENCY = new EncodedText('],"latencyMs":');
const DECISION_ID = new EncodedText(',"decisionId":');
const FILTERED_CONTEXT = new EncodedText(',"filteredContext":');

/** The pieces of this module's texts (text-pieces.ts). */
const pieces = new TextPieces();
/** A decision row's: the row crosses to the log writer as its pieces (PiecesRow), while the answer is built. */
const rowPieces = new TextPieces();

/**
 * A step of the walk to a combination's assignments: by layer id, then policy id, then allocation
 * id ("" for none), one step per layer the resolution holds.
 */
interface AssignmentsNode {
  readonly next: Map<string, AssignmentsNode>;
  text: EncodedText | undefined;
  /** On a layer's last step (its allocation id): that layer's head and tail, found once for every walk through it. */
  layer: WalkedLayer | undefined;
}

/** A layer's head and its outcome's tail as served (not attribution only: every parameter was resolved). */
interface WalkedLayer {
  readonly tails: LayerTails;
  readonly served: LayerTail;
}

/** Steps and characters of text kept at most per version (~1.6 MB): a bundle with many layers and arms has more combinations than are worth keeping. */
export const MAX_ASSIGNMENT_STEPS = 4_096;
const MAX_ASSIGNMENT_CHARS = 1_000_000;

const assignmentsNode = (): AssignmentsNode => ({ next: new Map(), text: undefined, layer: undefined });

/** A bundle version's texts, quoted once: each layer's head, each outcome's tail, the decision event's tenant fields. */
export class VersionTexts {
  private readonly layers = new Map<string, LayerTails>();
  private readonly assignments = assignmentsNode();
  private assignmentSteps = 0;
  private assignmentChars = 0;
  /**
   * The layers of the resolution the assignments' walk last went all through (`walkedFor`), as the
   * walk found them: the row and the answer written next take each layer's head and tail from
   * here, where each looked them up again (three Map gets a layer a text).
   */
  private readonly walked: WalkedLayer[] = [];
  private walkedFor: Resolution | undefined;
  /** `,"configVersion":…,"orgId":…,"projectId":…,"env":…` for the bundle's own tenant. */
  private readonly ownTenantTail: EncodedText;
  private readonly version: string;

  constructor(
    private readonly bundle: Bundle,
    private readonly maxAssignmentSteps = MAX_ASSIGNMENT_STEPS,
  ) {
    this.version = JSON.stringify(bundle.version);
    this.ownTenantTail = new EncodedText(tenantTail(this.version, bundle.orgId, bundle.projectId, bundle.env));
  }

  /** A decision event's `,"configVersion":…,"orgId":…,"projectId":…,"env":…`: made once for the bundle's own tenant and version. */
  tenantTail(orgId: string, projectId: string, env: string, configVersion: string): Piece {
    const { bundle } = this;
    return orgId === bundle.orgId && projectId === bundle.projectId && env === bundle.env && configVersion === bundle.version
      ? this.ownTenantTail
      : tenantTail(JSON.stringify(configVersion), orgId, projectId, env);
  }

  /**
   * sharedParts, with the assignments' JSON kept per combination of the layers' allocations when
   * every parameter was resolved (`allParameters`): then the assignments are the version's
   * defaults overridden by each resolved layer's allocation in turn, so the same combination
   * always writes the same text (an 88-flag bundle's is ~3 KB).
   */
  sharedParts(resolution: Resolution, allParameters: boolean): SharedParts {
    if (!allParameters) return sharedParts(resolution);
    const filtered = resolution.filteredContext;
    const assignments = this.assignmentsText(resolution);
    const filteredContext = filtered === undefined ? undefined : JSON.stringify(filtered);
    return typeof assignments === "string" ? { assignments, filteredContext } : { assignments: assignments.text, filteredContext, encodedAssignments: assignments };
  }

  /** The combination's assignments, kept with their bytes; a string when the version keeps no more. */
  private assignmentsText(resolution: Resolution): string | EncodedText {
    let node: AssignmentsNode | undefined = this.assignments;
    const { layers } = resolution;
    const walked = this.walked;
    for (let i = 0; i < layers.length && node !== undefined; i++) {
      const layer = layers[i]!;
      node = this.step(this.step(this.step(node, layer.layerId), layer.policyId ?? ""), layer.allocationId ?? "");
      if (node !== undefined) walked[i] = node.layer ??= this.walkedLayer(layer);
    }
    this.walkedFor = node === undefined ? undefined : resolution;
    if (node?.text !== undefined) return node.text;
    const text = JSON.stringify(resolution.assignments);
    if (node !== undefined && this.assignmentChars + text.length <= MAX_ASSIGNMENT_CHARS) {
      this.assignmentChars += text.length;
      return (node.text = new EncodedText(text));
    }
    return text;
  }

  /** The node after `key`, made while the version keeps fewer than its most steps; undefined past that. */
  private step(node: AssignmentsNode | undefined, key: string): AssignmentsNode | undefined {
    if (node === undefined) return undefined;
    let next = node.next.get(key);
    if (next === undefined && this.assignmentSteps < this.maxAssignmentSteps) {
      this.assignmentSteps += 1;
      node.next.set(key, (next = assignmentsNode()));
    }
    return next;
  }

  /** The compact log row of the decision event (decision-event.ts) whose id is `eventId`. */
  decisionRow(resolution: Resolution, source: DecisionSource, unitKey: string, eventId: string, parts: SharedParts): PiecesRow {
    const tail = this.tenantTail(source.orgId, source.projectId, source.env, source.configVersion);
    const timestamp = quotedTime(source.timestamp);
    rowPieces.push("[", timestamp, ",[");
    rowPieces.quotedId(eventId);
    rowPieces.push(TYPE_UNIT_KEY);
    rowPieces.quoted(unitKey);
    rowPieces.push(TIMESTAMP, timestamp, ASSIGNMENTS, parts.encodedAssignments ?? parts.assignments, LAYERS);
    const { layers } = resolution;
    const walked = this.walkedFor === resolution ? this.walked : undefined;
    for (let i = 0; i < layers.length; i++) {
      const layer = layers[i]!;
      const tails = walked?.[i]!.tails ?? this.tailsOf(layer);
      const tail = walked?.[i]!.served ?? tailOf(tails, layer);
      rowPieces.push(i === 0 ? tails.head : tails.nextHead, String(layer.bucket), tail.event);
    }
    rowPieces.push(LATENCY, JSON.stringify(source.latencyMs), DECISION_ID);
    rowPieces.quotedId(source.decisionId);
    rowPieces.push(tail);
    if (parts.filteredContext !== undefined) rowPieces.push(FILTERED_CONTEXT, parts.filteredContext);
    rowPieces.push("}]]");
    return rowPieces.row(LOG_FORMAT_COMPACT);
  }

  /** POST /v1/resolve's answer (bundle/response.ts resolveResponse), as JSON. */
  resolveAnswer(resolution: Resolution, decisionId: string, timestamp: string, configVersion: string, parts: SharedParts): string {
    const version = configVersion === this.bundle.version ? this.version : JSON.stringify(configVersion);
    pieces.push('{"decisionId":');
    pieces.quotedId(decisionId);
    pieces.push(',"assignments":', parts.assignments, ',"metadata":{"timestamp":', quotedTime(timestamp));
    if (resolution.unitKeyValue !== undefined) {
      pieces.push(',"unitKeyValue":');
      pieces.quoted(resolution.unitKeyValue);
    }
    pieces.push(',"layers":[');
    const { layers } = resolution;
    const walked = this.walkedFor === resolution ? this.walked : undefined;
    for (let i = 0; i < layers.length; i++) {
      const layer = layers[i]!;
      const tails = walked?.[i]!.tails ?? this.tailsOf(layer);
      const tail = walked?.[i]!.served ?? tailOf(tails, layer);
      pieces.push(i === 0 ? tails.head.text : tails.nextHead.text, String(layer.bucket), tail.answer);
    }
    pieces.push('],"configVersion":', version);
    if (parts.filteredContext !== undefined) pieces.push(',"filteredContext":', parts.filteredContext);
    if (resolution.unknownParameters !== undefined) pieces.push(',"unknownParameters":', JSON.stringify(resolution.unknownParameters));
    if (resolution.unitKeyMissing) pieces.push(',"unitKeyMissing":true');
    pieces.push('},"stateVersion":', version, ',"suggestedRefreshMs":', String(SUGGESTED_REFRESH_MS), "}");
    return pieces.join();
  }

  /** A layer's texts for the walk's node of its allocation: as served, as every parameter was resolved. */
  private walkedLayer(layer: LayerResolution): WalkedLayer {
    const tails = this.tailsOf(layer);
    return { tails, served: tailOf(tails, layer) };
  }

  private tailsOf(layer: LayerResolution): LayerTails {
    let tails = this.layers.get(layer.layerId);
    if (tails === undefined) {
      const head = `{"layerId":${JSON.stringify(layer.layerId)},"bucket":`;
      tails = { head: new EncodedText(head), nextHead: new EncodedText(`,${head}`), byOutcome: new Map() };
      this.layers.set(layer.layerId, tails);
    }
    return tails;
  }
}

/** The tail of this layer's outcome, made on first use: a policy's allocation fixes its keys, name and probability in a version. */
function tailOf(tails: LayerTails, layer: LayerResolution): LayerTail {
  const policyId = layer.policyId ?? "";
  let byAllocation = tails.byOutcome.get(policyId);
  if (byAllocation === undefined) tails.byOutcome.set(policyId, (byAllocation = new Map()));
  const allocationId = layer.allocationId ?? "";
  let both = byAllocation.get(allocationId);
  if (both === undefined) byAllocation.set(allocationId, (both = [tailFor(layer, false), tailFor(layer, true)]));
  return layer.attributionOnly === true ? both[1] : both[0];
}

/** What decision-event.ts (every field of LayerResolution, undefined ones left out) and response.ts's resolvedLayer write after the bucket. */
function tailFor(layer: LayerResolution, attributionOnly: boolean): LayerTail {
  let event = "";
  let answer = "";
  if (layer.policyId !== undefined) {
    event += `,"policyId":${JSON.stringify(layer.policyId)}`;
    answer += `,"policyId":${JSON.stringify(layer.policyId)}`;
  }
  if (layer.policyKey !== undefined) event += `,"policyKey":${JSON.stringify(layer.policyKey)}`;
  if (layer.allocationId !== undefined) {
    event += `,"allocationId":${JSON.stringify(layer.allocationId)}`;
    answer += `,"allocationId":${JSON.stringify(layer.allocationId)}`;
  }
  if (layer.allocationName !== undefined) {
    event += `,"allocationName":${JSON.stringify(layer.allocationName)}`;
    answer += `,"allocationName":${JSON.stringify(layer.allocationName)}`;
  }
  if (layer.allocationKey !== undefined) event += `,"allocationKey":${JSON.stringify(layer.allocationKey)}`;
  if (layer.probability !== undefined) event += `,"probability":${JSON.stringify(layer.probability)}`;
  if (attributionOnly) {
    event += ',"attributionOnly":true';
    answer += ',"attributionOnly":true';
  }
  return { event: new EncodedText(`${event}}`), answer: `${answer}}` };
}

function tenantTail(version: string, orgId: string, projectId: string, env: string): string {
  return `,"configVersion":${version},"orgId":${JSON.stringify(orgId)},"projectId":${JSON.stringify(projectId)},"env":${JSON.stringify(env)}`;
}
