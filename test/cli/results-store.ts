// A data folder holding a bundle with these policies (one layer each) and these events: the store
// `vane results` tests read.
import type { Bundle, Policy } from "../../src/bundle/types.js";
import type { StoredEvent } from "../../src/store/types.js";
import { START_MS, iso } from "../analysis/results/experiment.js";
import { bundleFor, inStore, tempDir } from "./helpers.js";

function bundleWith(policies: readonly Policy[]): Bundle {
  const bundle = bundleFor("shop", "2026-11-01T00:00:00Z");
  for (const policy of policies) {
    const layerId = `layer-${policy.id}`;
    bundle.parameters.push({ key: `${policy.id}.flag`, type: "boolean", default: false, layerId, namespace: policy.id });
    bundle.layers.push({ id: layerId, policies: [policy] });
  }
  return bundle;
}

export async function storeWith(events: readonly StoredEvent[], policies: readonly Policy[]): Promise<string> {
  const data = tempDir();
  await inStore(data, async (stores) => {
    await stores.bundles.put(bundleWith(policies), iso(START_MS));
    for (let i = 0; i < events.length; i += 1000) await stores.events.append(events.slice(i, i + 1000));
  });
  return data;
}

