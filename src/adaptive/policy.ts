// The adaptive policies of a bundle version, read once: what decide and the learner need of each
// (its layer, arms, reward, params and context width), found by policy id.
import type { CompiledBundle, CompiledLayer, CompiledPolicy } from "../bundle/compile.js";
import { type PolicyParams, policyParams } from "../bundle/policy-params.js";
import type { Layer, Policy, PolicyKind, Reward } from "../bundle/types.js";
import { encodedDimension } from "./features.js";

export type AdaptiveKind = Exclude<PolicyKind, "static">;

export interface AdaptivePolicy {
  readonly id: string;
  readonly key: string;
  readonly kind: AdaptiveKind;
  readonly layer: CompiledLayer;
  readonly layerSalt: string;
  readonly compiled: CompiledPolicy;
  /** Arm keys (allocation keys), in allocation order: learned state is kept by key. */
  readonly armKeys: readonly string[];
  readonly reward: Reward;
  readonly params: PolicyParams;
  /** Width of the encoded context (0 for context-free kinds). */
  readonly dimension: number;
  readonly entityKey: string | undefined;
  readonly logContextFields: readonly string[] | undefined;
}

export type AdaptiveCatalog = ReadonlyMap<string, AdaptivePolicy>;

const catalogs = new WeakMap<CompiledBundle, AdaptiveCatalog>();

/** The running adaptive policies of a compiled bundle, by id; built once per compiled bundle. */
export function adaptiveCatalog(compiled: CompiledBundle): AdaptiveCatalog {
  let catalog = catalogs.get(compiled);
  if (!catalog) {
    catalog = buildCatalog(compiled);
    catalogs.set(compiled, catalog);
  }
  return catalog;
}

function buildCatalog(compiled: CompiledBundle): AdaptiveCatalog {
  const catalog = new Map<string, AdaptivePolicy>();
  compiled.bundle.layers.forEach((layer: Layer, index) => {
    const compiledLayer = compiled.layers[index]!;
    for (const policy of layer.policies) {
      if (policy.kind === "static" || policy.state !== "running") continue;
      const compiledPolicy = compiledLayer.policies.find((p) => p.id === policy.id)!;
      catalog.set(policy.id, adaptivePolicy(policy, layer, compiledLayer, compiledPolicy));
    }
  });
  return catalog;
}

function adaptivePolicy(policy: Policy, layer: Layer, compiledLayer: CompiledLayer, compiled: CompiledPolicy): AdaptivePolicy {
  const params = policyParams(policy);
  return {
    id: policy.id,
    key: policy.key,
    kind: policy.kind as AdaptiveKind,
    layer: compiledLayer,
    layerSalt: layer.salt ?? layer.id,
    compiled,
    armKeys: policy.allocations.map((a) => a.key),
    reward: policy.reward!,
    params,
    dimension: policy.kind === "contextual" ? encodedDimension(params.features) : 0,
    entityKey: policy.entityKey,
    logContextFields: policy.logContextFields,
  };
}
