// What a resolution writes, as text built straight from it: the decision event's log row (the
// compact row of log-row.ts) and POST /v1/resolve's answer. Each equals, byte for byte, the
// JSON.stringify of the objects it replaces (encodeLogRow of decisionEvent's event, and
// resolveResponse's body; test/server/resolve-texts.test.ts holds them equal over random bundles
// and contexts): the assignments and filtered context are serialized once for both, and what a
// bundle version fixes (its ids quoted, the tenant's fields) is quoted once per version.
import type { LayerResolution, Resolution } from "../bundle/resolve.js";
import { SUGGESTED_REFRESH_MS } from "../bundle/response.js";
import type { Bundle } from "../bundle/types.js";
import type { DecisionSource } from "./decision-event.js";

/** The parts of a resolution both texts hold, serialized once. */
export interface SharedParts {
  readonly assignments: string;
  /** undefined when the resolution has no filtered context. */
  readonly filteredContext: string | undefined;
}

export function sharedParts(resolution: Resolution): SharedParts {
  const filtered = resolution.filteredContext;
  return { assignments: JSON.stringify(resolution.assignments), filteredContext: filtered === undefined ? undefined : JSON.stringify(filtered) };
}

/** A bundle version's strings as JSON, quoted once: its ids, and the decision event's closing fields. */
export class VersionTexts {
  private readonly quotedIds = new Map<string, string>();
  /** `,"configVersion":…,"orgId":…,"projectId":…,"env":…` for the bundle's own tenant. */
  private readonly tenantTail: string;
  private readonly version: string;

  constructor(private readonly bundle: Bundle) {
    this.version = JSON.stringify(bundle.version);
    this.tenantTail = tenantTail(this.version, bundle.orgId, bundle.projectId, bundle.env);
  }

  /** A string of the bundle (a layer's, policy's or allocation's id, key or name) as JSON. */
  quoted(value: string): string {
    let text = this.quotedIds.get(value);
    if (text === undefined) {
      text = JSON.stringify(value);
      this.quotedIds.set(value, text);
    }
    return text;
  }

  /** The compact log row of the decision event (decision-event.ts) whose id is `eventId`. */
  decisionRow(resolution: Resolution, source: DecisionSource, unitKey: string, eventId: string, parts: SharedParts): string {
    const { bundle } = this;
    const tail =
      source.orgId === bundle.orgId && source.projectId === bundle.projectId && source.env === bundle.env && source.configVersion === bundle.version
        ? this.tenantTail
        : tenantTail(JSON.stringify(source.configVersion), source.orgId, source.projectId, source.env);
    let text = `[${JSON.stringify(source.timestamp)},[${JSON.stringify(eventId)},{"type":"decision","unitKey":${JSON.stringify(unitKey)},"timestamp":${JSON.stringify(source.timestamp)},"assignments":${parts.assignments},"layers":[`;
    const { layers } = resolution;
    for (let i = 0; i < layers.length; i++) text += (i === 0 ? "" : ",") + this.eventLayer(layers[i]!);
    text += `],"latencyMs":${JSON.stringify(source.latencyMs)},"decisionId":${JSON.stringify(source.decisionId)}${tail}`;
    if (parts.filteredContext !== undefined) text += `,"filteredContext":${parts.filteredContext}`;
    return `${text}}]]`;
  }

  /** POST /v1/resolve's answer (bundle/response.ts resolveResponse), as JSON. */
  resolveAnswer(resolution: Resolution, ids: { readonly decisionId: string; readonly timestamp: string; readonly version: string }, parts: SharedParts): string {
    const version = ids.version === this.bundle.version ? this.version : JSON.stringify(ids.version);
    let text = `{"decisionId":${JSON.stringify(ids.decisionId)},"assignments":${parts.assignments},"metadata":{"timestamp":${JSON.stringify(ids.timestamp)}`;
    if (resolution.unitKeyValue !== undefined) text += `,"unitKeyValue":${JSON.stringify(resolution.unitKeyValue)}`;
    text += `,"layers":[`;
    const { layers } = resolution;
    for (let i = 0; i < layers.length; i++) text += (i === 0 ? "" : ",") + this.answerLayer(layers[i]!);
    text += `],"configVersion":${version}`;
    if (parts.filteredContext !== undefined) text += `,"filteredContext":${parts.filteredContext}`;
    if (resolution.unknownParameters !== undefined) text += `,"unknownParameters":${JSON.stringify(resolution.unknownParameters)}`;
    if (resolution.unitKeyMissing) text += `,"unitKeyMissing":true`;
    return `${text}},"stateVersion":${version},"suggestedRefreshMs":${SUGGESTED_REFRESH_MS}}`;
  }

  /** A layer as decision-event.ts's decidedLayer writes it: every field of LayerResolution, undefined ones left out. */
  private eventLayer(layer: LayerResolution): string {
    let text = `{"layerId":${this.quoted(layer.layerId)},"bucket":${layer.bucket}`;
    if (layer.policyId !== undefined) text += `,"policyId":${this.quoted(layer.policyId)}`;
    if (layer.policyKey !== undefined) text += `,"policyKey":${this.quoted(layer.policyKey)}`;
    if (layer.allocationId !== undefined) text += `,"allocationId":${this.quoted(layer.allocationId)}`;
    if (layer.allocationName !== undefined) text += `,"allocationName":${this.quoted(layer.allocationName)}`;
    if (layer.allocationKey !== undefined) text += `,"allocationKey":${this.quoted(layer.allocationKey)}`;
    if (layer.probability !== undefined) text += `,"probability":${JSON.stringify(layer.probability)}`;
    if (layer.attributionOnly !== undefined) text += `,"attributionOnly":true`;
    return `${text}}`;
  }

  /** A layer as the answer's metadata.layers holds it (response.ts resolvedLayer). */
  private answerLayer(layer: LayerResolution): string {
    let text = `{"layerId":${this.quoted(layer.layerId)},"bucket":${layer.bucket}`;
    if (layer.policyId !== undefined) text += `,"policyId":${this.quoted(layer.policyId)}`;
    if (layer.allocationId !== undefined) text += `,"allocationId":${this.quoted(layer.allocationId)}`;
    if (layer.allocationName !== undefined) text += `,"allocationName":${this.quoted(layer.allocationName)}`;
    if (layer.attributionOnly) text += `,"attributionOnly":true`;
    return `${text}}`;
  }
}

function tenantTail(version: string, orgId: string, projectId: string, env: string): string {
  return `,"configVersion":${version},"orgId":${JSON.stringify(orgId)},"projectId":${JSON.stringify(projectId)},"env":${JSON.stringify(env)}`;
}
