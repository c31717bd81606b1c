// The last good bundle of each project and environment, in memory. Requests are served from it;
// at most every `refreshMs` one request asks the store whether the version changed (concurrent
// askers share that one call). When the store fails, a copy checked within `staleMs` is served as
// stale; with no copy the caller answers 503. Compilation and the event catalog are built once
// per version, on first use. Listeners hear of every new version a check finds (the change hub).
import { type CompiledBundle, compileBundle } from "../bundle/compile.js";
import { FlagIndex } from "../bundle/openfeature.js";
import type { Bundle } from "../bundle/types.js";
import type { Engine } from "../engine/engine.js";
import type { BundleStore } from "../store/types.js";
import type { Clock } from "./clock.js";
import { type EventCatalog, type SchemaCompiler, compileEventCatalog } from "./events/schemas.js";
import { VersionTexts } from "./resolve-texts.js";

export class BundleEntry {
  /** Strong validator derived from the bundle version (runtime-api.md "Versioning"). */
  readonly etag: string;
  /** The response body, serialized once per version. */
  readonly json: string;
  private compiledBundle: CompiledBundle<Engine> | undefined;
  private eventCatalog: EventCatalog | undefined;
  private flagIndex: FlagIndex | undefined;
  private versionTexts: VersionTexts | undefined;

  constructor(
    readonly bundle: Bundle,
    private readonly build: { readonly engine: Engine; readonly schemaCompiler?: SchemaCompiler },
  ) {
    this.etag = `"${bundle.version}"`;
    this.json = JSON.stringify(bundle);
  }

  get compiled(): CompiledBundle<Engine> {
    return (this.compiledBundle ??= compileBundle(this.bundle, this.build.engine));
  }

  /** The bundle as OpenFeature flags (the OFREP endpoints). */
  get flags(): FlagIndex {
    return (this.flagIndex ??= new FlagIndex(this.bundle));
  }

  /** What resolutions against this version write, quoted once (resolve-texts.ts). */
  get texts(): VersionTexts {
    return (this.versionTexts ??= new VersionTexts(this.bundle));
  }

  get catalog(): EventCatalog {
    return (this.eventCatalog ??= compileEventCatalog(this.bundle.eventDefinitions, this.build.schemaCompiler));
  }
}

/** A bundle the cache holds: `ok` lets it stand where a NotServed could (resolution.ts's bundleFor). */
export interface BundleFound {
  readonly status: "found";
  readonly ok: true;
  readonly entry: BundleEntry;
  readonly stale: boolean;
}

export type BundleLookup = BundleFound | { readonly status: "missing" } | { readonly status: "unavailable" };

/**
 * Whether the lookup found a bundle `orgId` may see. Another organization's bundle is answered as
 * missing, on every route: its existence is not for this key.
 */
export function foundFor(found: BundleLookup, orgId: string): found is BundleFound {
  return found.status === "found" && found.entry.bundle.orgId === orgId;
}

export interface BundleCacheOptions {
  readonly bundles: BundleStore;
  readonly engine: Engine;
  readonly clock: Clock;
  /** How long a version check holds. */
  readonly refreshMs: number;
  /** How long after its last good check a copy may be served while the store is down. */
  readonly staleMs: number;
  readonly schemaCompiler?: SchemaCompiler;
  /**
   * Whether askers at once share one store call (true when absent). Not in a Worker: workerd
   * cancels, as hung, a request that waits on I/O another request started.
   */
  readonly shareChecks?: boolean;
}

/** A held copy; its answers are made once, so a lookup within `refreshMs` allocates nothing. */
class Slot {
  readonly fresh: BundleFound;
  readonly stale: BundleFound;
  constructor(
    readonly entry: BundleEntry,
    public checkedAt: number,
  ) {
    this.fresh = { status: "found", ok: true, entry, stale: false };
    this.stale = { status: "found", ok: true, entry, stale: true };
  }
}

/** A check found a version other than the one held: an import, or newly published weights. */
export interface BundleChange {
  readonly projectId: string;
  readonly env: string;
  readonly entry: BundleEntry;
}

const MISSING: BundleLookup = { status: "missing" };
const UNAVAILABLE: BundleLookup = { status: "unavailable" };

export class BundleCache {
  /** projectId → env → copy: no key string is built per lookup. */
  private readonly slots = new Map<string, Map<string, Slot>>();
  private readonly inflight = new Map<string, Promise<BundleLookup>>();
  private readonly listeners = new Set<(change: BundleChange) => void>();

  constructor(private readonly options: BundleCacheOptions) {}

  lookup(projectId: string, env: string): Promise<BundleLookup> | BundleLookup {
    const slot = this.slots.get(projectId)?.get(env);
    if (slot !== undefined && this.options.clock.now() - slot.checkedAt < this.options.refreshMs) return slot.fresh;
    return this.check(`${projectId}\u0000${env}`, { projectId, env }, slot);
  }

  /** Asks the store now, whatever the age of the held copy: the change hub's watch. */
  recheck(projectId: string, env: string): Promise<BundleLookup> {
    return this.check(`${projectId}\u0000${env}`, { projectId, env }, this.slots.get(projectId)?.get(env));
  }

  /** Another server stored a new version: a held copy is replaced now, not at its next refresh. */
  changed(projectId: string, env: string): void {
    if (this.slots.get(projectId)?.has(env) === true) void this.recheck(projectId, env).catch(() => undefined);
  }

  /** `listener` hears of each new version a check finds; the returned function stops that. */
  onChange(listener: (change: BundleChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private check(id: string, where: { projectId: string; env: string }, slot: Slot | undefined): Promise<BundleLookup> {
    if (this.options.shareChecks === false) return this.refresh(where, slot);
    let pending = this.inflight.get(id);
    if (pending === undefined) {
      pending = this.refresh(where, slot).finally(() => this.inflight.delete(id));
      this.inflight.set(id, pending);
    }
    return pending;
  }

  /** The bundles held now: the versions being served (read by the metrics). */
  *served(): Iterable<{ readonly projectId: string; readonly env: string; readonly version: string }> {
    for (const envs of this.slots.values()) {
      for (const { entry } of envs.values()) yield { projectId: entry.bundle.projectId, env: entry.bundle.env, version: entry.bundle.version };
    }
  }

  private async refresh(where: { projectId: string; env: string }, slot: Slot | undefined): Promise<BundleLookup> {
    const now = this.options.clock.now();
    try {
      const version = await this.options.bundles.version(where.projectId, where.env);
      if (version !== undefined && slot !== undefined && slot.entry.bundle.version === version) {
        slot.checkedAt = now;
        return slot.fresh;
      }
      const stored = version === undefined ? undefined : await this.options.bundles.get(where.projectId, where.env);
      const envs = this.slots.get(where.projectId);
      if (stored === undefined) {
        envs?.delete(where.env);
        if (envs?.size === 0) this.slots.delete(where.projectId);
        return MISSING;
      }
      const fresh = new Slot(new BundleEntry(stored.bundle, this.options), now);
      if (envs === undefined) this.slots.set(where.projectId, new Map([[where.env, fresh]]));
      else envs.set(where.env, fresh);
      for (const listener of this.listeners) listener({ ...where, entry: fresh.entry });
      return fresh.fresh;
    } catch {
      if (slot !== undefined && now - slot.checkedAt < this.options.staleMs) return slot.stale;
      return UNAVAILABLE;
    }
  }
}
