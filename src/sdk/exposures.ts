// Exposure events for local resolutions (runtime-api.md "Exposure event"): one per unit, layer,
// policy and allocation per client session. None for layers skipped for want of a unit (rule 1,
// they are not in the resolution), for attributionOnly layers, or for layers no policy took (the
// unit saw defaults, no experiment). A resolution whose layers hash different units (multi-entity
// layers) makes one event per unit, each with the layers bucketed on it.
import type { CompiledBundle, CompiledLayer } from "../bundle/compile.js";
import type { LayerOutcome } from "../bundle/layer-outcomes.js";
import { type LayerResolution, type Resolution, outcomeLayer, unitValue } from "../bundle/resolve.js";
import { layerAssignment } from "../bundle/response.js";
import type { Context, JsonValue } from "../bundle/types.js";
import type { OutgoingEvent } from "./event-queue.js";

/** A session that sees more than this many exposures starts remembering afresh: bounded memory (a server-side client sees many units). */
const MAX_REMEMBERED = 50_000;

/** What every event the client sends carries besides its own fields. */
export interface EventStamp {
  readonly sessionId: string;
  readonly sdkName: string;
  readonly sdkVersion: string;
  readonly projectId: string;
  readonly env: string;
}

export interface Decision {
  readonly decisionId: string;
  /** ISO 8601. */
  readonly timestamp: string;
}

/** A getter's read of parameter `key` from its layer's outcome: the value it got, and the project's unit in that context. */
export interface FlagRead {
  readonly key: string;
  readonly value: JsonValue;
  readonly projectUnit: string | undefined;
}

/** What one exposure event says besides the stamp and the decision. */
interface Exposure {
  readonly unit: string;
  readonly assignments: Record<string, JsonValue>;
  readonly layers: readonly LayerResolution[];
  readonly projectUnit: string | undefined;
}

export class ExposureLog {
  /** Units seen per layer, policy and allocation: lookups by the ids as they are, no key string built per call. */
  private readonly seen = new Map<string, Map<string | undefined, Map<string, Set<string>>>>();
  private remembered = 0;
  /** Counts the times the memory started afresh: an outcome known exposed in an earlier generation is looked up again. */
  generation = 0;
  private readonly layerIndex = new WeakMap<CompiledBundle, Map<string, CompiledLayer>>();

  constructor(private readonly stamp: EventStamp) {}

  /** The exposure events of a resolution that this session has not recorded yet. */
  record(compiled: CompiledBundle, context: Context, resolution: Resolution, decision: Decision): OutgoingEvent[] {
    const layers = this.layersOf(compiled);
    let byUnit: Map<string, LayerResolution[]> | undefined; // made only for a new exposure: most reads repeat one
    for (const layer of resolution.layers) {
      if (layer.attributionOnly || layer.allocationId === undefined) continue;
      // The layer is in the resolution, so its unit was in the context.
      const unit = unitValue(context, layers.get(layer.layerId)!.unitKey)!;
      if (!this.firstTime(layer, unit)) continue;
      byUnit ??= new Map();
      const group = byUnit.get(unit);
      if (group) group.push(layer);
      else byUnit.set(unit, [layer]);
    }
    if (byUnit === undefined) return [];
    return [...byUnit].map(([unit, exposed]) => {
      const assignments = exposedAssignments(resolution, exposed.map((l) => layers.get(l.layerId)!));
      return this.event(compiled, { unit, assignments, layers: exposed, projectUnit: resolution.unitKeyValue }, decision);
    });
  }

  /**
   * A getter's read from its layer's outcome: the event record() makes for a resolution of that
   * parameter alone, when this session has not recorded it yet. The outcome remembers that it
   * was, so the next read of it costs a comparison.
   */
  recordOutcome(compiled: CompiledBundle, outcome: LayerOutcome, read: FlagRead, decision: Decision): OutgoingEvent | undefined {
    if (outcome.exposedIn === this.generation) return undefined;
    const layer = outcomeLayer(outcome);
    const first = this.firstTime(layer, outcome.unit);
    outcome.exposedIn = this.generation;
    if (!first) return undefined;
    return this.event(compiled, { unit: outcome.unit, assignments: { [read.key]: read.value }, layers: [layer], projectUnit: read.projectUnit }, decision);
  }

  private event(compiled: CompiledBundle, exposure: Exposure, decision: Decision): OutgoingEvent {
    const { unit, projectUnit } = exposure;
    return {
      type: "exposure",
      unitKey: unit,
      timestamp: decision.timestamp,
      assignments: exposure.assignments,
      layers: exposure.layers.map(layerAssignment),
      decisionId: decision.decisionId,
      configVersion: compiled.version,
      // The contract's userId: the project's unit, when this event's unit is another entity's.
      userId: projectUnit !== unit ? projectUnit : undefined,
      ...this.stamp,
    };
  }

  /** Whether this unit is new to the layer's policy and allocation (then remembered). */
  private firstTime(layer: LayerResolution, unit: string): boolean {
    let policies = this.seen.get(layer.layerId);
    if (policies === undefined) this.seen.set(layer.layerId, (policies = new Map()));
    let allocations = policies.get(layer.policyId);
    if (allocations === undefined) policies.set(layer.policyId, (allocations = new Map()));
    let units = allocations.get(layer.allocationId!);
    if (units === undefined) allocations.set(layer.allocationId!, (units = new Set()));
    if (units.has(unit)) return false;
    if (this.remembered >= MAX_REMEMBERED) {
      this.seen.clear();
      this.remembered = 0;
      this.generation++;
      return this.firstTime(layer, unit);
    }
    units.add(unit);
    this.remembered++;
    return true;
  }

  private layersOf(compiled: CompiledBundle): Map<string, CompiledLayer> {
    let index = this.layerIndex.get(compiled);
    if (!index) this.layerIndex.set(compiled, (index = new Map(compiled.layers.map((l) => [l.id, l]))));
    return index;
  }
}

/** The resolved values of the exposed layers' parameters. */
function exposedAssignments(resolution: Resolution, layers: readonly CompiledLayer[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const layer of layers) {
    for (const key of layer.parameterKeys) if (Object.hasOwn(resolution.assignments, key)) out[key] = resolution.assignments[key]!;
  }
  return out;
}
