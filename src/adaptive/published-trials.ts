// What a learning server last published of its open trials (store: published_open_trials), so that
// each publication writes only what changed since: bins new or with a new count, and bins whose
// window passed. Publishing every bin again each second cost 20–33 ms of the event loop a second
// for a 4-arm policy with a 1-hour window (4,096 bins an arm), whatever the traffic. An arm's bins
// stay in time order (delay.ts), so the change is a merge of two sorted lists, no key strings.
import type { OpenTrialBin, OpenTrialBinKey, OpenTrialChanges } from "../store/types.js";
import type { LearnedState } from "./state.js";

/** One arm's bins as published: starts (ascending) and counts. */
interface ArmBins {
  readonly starts: number[];
  readonly counts: number[];
}

/** Changes to store, and what to remember once they are stored. */
export interface Publication {
  readonly changes: OpenTrialChanges;
  /** Call once the store holds the changes: the next publication starts from them. */
  stored(): void;
}

export class PublishedTrials {
  /**
   * Per policy and arm, the bins the store holds; undefined until this learner's first
   * publication stored (the store may hold another learner's, so the first one replaces them all).
   */
  private held: Map<string, ArmBins> | undefined;

  /** What brings the store to the state's open trials at `nowMs`; undefined when it holds them already. */
  next(state: LearnedState, nowMs: number): Publication | undefined {
    const upsert: OpenTrialBin[] = [];
    const remove: OpenTrialBinKey[] = [];
    const now = new Map<string, ArmBins>();
    const before = this.held;
    for (const { projectId, env, policyId, state: policy } of state.entries()) {
      for (const [armKey, trials] of policy.open) {
        const key = `${projectId}\u0000${env}\u0000${policyId}\u0000${armKey}`;
        const bins: ArmBins = { starts: [], counts: [] };
        trials.binsInto(nowMs, bins.starts, bins.counts);
        now.set(key, bins);
        const bin = (i: number): OpenTrialBin => ({ projectId, env, policyId, armKey, windowMs: trials.windowMs, atMs: bins.starts[i]!, count: bins.counts[i]! });
        const was = before?.get(key) ?? { starts: [], counts: [] };
        let i = 0;
        let j = 0;
        while (i < was.starts.length || j < bins.starts.length) {
          if (j === bins.starts.length || (i < was.starts.length && was.starts[i]! < bins.starts[j]!)) {
            remove.push({ projectId, env, policyId, armKey, atMs: was.starts[i++]! });
          } else if (i === was.starts.length || bins.starts[j]! < was.starts[i]!) {
            upsert.push(bin(j++));
          } else {
            if (was.counts[i] !== bins.counts[j]) upsert.push(bin(j));
            i++;
            j++;
          }
        }
      }
    }
    // An arm no longer in the state: its bins go too.
    for (const [key, was] of before ?? []) {
      if (now.has(key)) continue;
      const [projectId = "", env = "", policyId = "", armKey = ""] = key.split("\u0000");
      for (const atMs of was.starts) remove.push({ projectId, env, policyId, armKey, atMs });
    }
    const replace = before === undefined;
    if (!replace && upsert.length === 0 && remove.length === 0) return undefined;
    return {
      changes: { upsert, remove: replace ? [] : remove, replace },
      stored: () => {
        this.held = now;
      },
    };
  }
}

