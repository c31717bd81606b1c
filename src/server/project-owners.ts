// Which organization a project belongs to: the org of its bundles (store/tenancy.ts). The events
// route asks for every event naming a project, so answers are cached like bundles: checked at most
// every `refreshMs`, served stale while the store is down, and bounded in number, since callers
// choose the project ids they send.
import type { KeyRecord, BundleStore } from "../store/types.js";
import type { Clock } from "./clock.js";

export interface ProjectOwnersOptions {
  readonly bundles: BundleStore;
  readonly clock: Clock;
  readonly refreshMs: number;
  readonly staleMs: number;
  /** Projects remembered at most; the oldest answer is dropped first. */
  readonly maxProjects?: number;
  /** Whether askers at once share one store call (true when absent; not in a Worker: BundleCacheOptions.shareChecks). */
  readonly shareChecks?: boolean;
}

const DEFAULT_MAX_PROJECTS = 10_000;

export class OwnersUnavailable extends Error {}

interface Answer {
  readonly orgs: readonly string[];
  readonly checkedAt: number;
}

export class ProjectOwners {
  private readonly answers = new Map<string, Answer>();
  private readonly inflight = new Map<string, Promise<readonly string[]>>();

  constructor(private readonly options: ProjectOwnersOptions) {}

  /**
   * A key may write into a project its organization owns; a project-pinned key also into its own
   * project before any bundle names it. A project owned by another org is refused either way.
   * Throws OwnersUnavailable when the store can't say and no recent answer is known.
   */
  allows(key: KeyRecord, projectId: string): Promise<boolean> | boolean {
    // A promise only when the store must be asked: the events route asks once per event.
    const orgs = this.orgsOf(projectId);
    return orgs instanceof Promise ? orgs.then((known) => permits(key, projectId, known)) : permits(key, projectId, orgs);
  }

  private orgsOf(projectId: string): Promise<readonly string[]> | readonly string[] {
    const known = this.answers.get(projectId);
    if (known !== undefined && this.options.clock.now() - known.checkedAt < this.options.refreshMs) return known.orgs;
    if (this.options.shareChecks === false) return this.refresh(projectId, known);
    let pending = this.inflight.get(projectId);
    if (pending === undefined) {
      pending = this.refresh(projectId, known).finally(() => this.inflight.delete(projectId));
      this.inflight.set(projectId, pending);
    }
    return pending;
  }

  private async refresh(projectId: string, known: Answer | undefined): Promise<readonly string[]> {
    const now = this.options.clock.now();
    let orgs: string[];
    try {
      orgs = await this.options.bundles.orgsOf(projectId);
    } catch (error) {
      if (known !== undefined && now - known.checkedAt < this.options.staleMs) return known.orgs;
      throw new OwnersUnavailable("bundle store unavailable: project owner unknown", { cause: error });
    }
    this.answers.delete(projectId); // re-inserted last: the Map's order is the eviction order
    this.answers.set(projectId, { orgs, checkedAt: now });
    if (this.answers.size > (this.options.maxProjects ?? DEFAULT_MAX_PROJECTS)) {
      this.answers.delete(this.answers.keys().next().value!);
    }
    return orgs;
  }
}

function permits(key: KeyRecord, projectId: string, orgs: readonly string[]): boolean {
  if (orgs.length === 0) return key.projectId === projectId;
  return orgs.length === 1 && orgs[0] === key.orgId;
}
