// Decisions for the pending book's tests (pending-growth, pending-shrink): every column used (text
// ids, entities, contexts) somewhere in each chunk, two window lengths.
import { Pending, type PolicyRef } from "../../src/adaptive/pending.js";
import { uuidv7 } from "../../src/ids/uuidv7.js";

export const T0 = Date.parse("2026-11-28T00:00:00.000Z");

export function ref(policyId: string, windowMs: number): PolicyRef {
  return { orgId: "org", projectId: "proj", env: "production", policyId, rewardEvent: "win", windowMs, stateKey: `proj/production/${policyId}` };
}

export const SHORT = ref("short", 1_000);
export const CTX = ref("ctx", 5_000);

/** The i-th decision, received at T0 + i ms. */
export function made(i: number): Pending {
  const contextual = i % 3 === 0;
  const r = contextual ? CTX : SHORT;
  const id = i % 11 === 0 ? `client-${i}` : uuidv7(T0 + i);
  return new Pending(i + 1, id, r, `arm-${i % 4}`, i % 5 === 0 ? `account-${i % 50}` : "", contextual ? Float64Array.of(i, i / 2) : undefined, T0 + i + r.windowMs, 0);
}

/** A decision's fields, to compare what the book gives back with what was added. */
export function described(p: Pending): unknown[] {
  return [p.seq, p.decisionId, p.ref.policyId, p.armKey, p.entity, p.features && Array.from(p.features), p.closesAt, p.flags];
}
