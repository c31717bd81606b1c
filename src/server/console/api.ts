// The JSON the console's pages read, under /console/api: the same stores and admin reads the CLI
// runs (`vane bundles get|history|diff`, `vane results`, `vane report`, `vane keys list`, `vane events
// count|discovered`; a key's last use and rate-limit refusals, which only this process knows), cut to what the session's viewer may see. The writes, for admin-token
// sessions only, are the CLI's own through the admin operations: a rollback (`vane bundles
// rollback`), a parameter's default (`vane flags set`) and a rollout's share (`vane rollout`, 0 %
// pauses), each shown as a diff before it publishes. Another organization's project answers 404,
// as one that does not exist.
import { type Context, Hono } from "hono";
import { readPolicyOutcomes } from "../../analysis/outcomes.js";
import { policyReport, refusal } from "../../analysis/policy-report.js";
import { diffBundles } from "../../bundle/diff.js";
import type { BundleEdit } from "../../bundle/edits.js";
import type { Stores } from "../../store/types.js";
import { editBundle } from "../admin/bundle-operations.js";
import { answerOr } from "../admin/routes.js";
import type { KeyUsage } from "../auth/key-usage.js";
import type { ValidationFailures } from "../events/validation-failures.js";
import { EVENT_TYPES, type ReadEvents, countEvents, listEvents } from "../admin/event-reads.js";
import { keyStatus } from "../admin/key-operations.js";
import { type AdminOperations, publicKey } from "../admin/operations.js";
import { AdminRefusal } from "../admin/refusal.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { RETRY_AFTER_SECONDS, badRequest, fail } from "../errors.js";
import { isObject, readJson } from "../request.js";
import type { ServiceMetrics } from "../observability/types.js";
import { type ConsoleLive, LAST_EVENTS, eventRow } from "./live.js";
import { metricsFigures } from "./metrics-figures.js";
import type { ConsoleResults } from "./results.js";
import { ADMIN, type Viewer, sees } from "./viewer.js";

export interface ConsoleApiDependencies {
  readonly stores: Stores;
  /** What answers the events page's reads (DuckDB's on Node, as `vane events` reads). */
  readonly readEvents: ReadEvents;
  readonly clock: Clock;
  /** What GET /health answers. */
  readonly health: () => Promise<unknown>;
  /** The service's metrics, when they are on. */
  readonly metrics?: ServiceMetrics;
  readonly reportError: (error: unknown, requestId?: string) => void;
  /** Experiment results, when the host can compute them. */
  readonly results?: ConsoleResults;
  /** The admin API's operations: what the writes publish through, with every check and the new version in the history. */
  readonly operations: Pick<AdminOperations, "publishBundle" | "rollbackBundle">;
  /** Each key's last use and rate-limit refusals in this process. */
  readonly usage: KeyUsage;
  /** Events refused one by one in this process, by reason. */
  readonly failures: ValidationFailures;
  /** The pages' live updates. */
  readonly live: ConsoleLive;
  /** Whether another stream may open (false near the open-file limit); always when absent. */
  readonly admitStream?: () => boolean;
  /** The signed-in viewer of the request (the session middleware found it). */
  readonly viewerOf: (c: Context<AppEnv>) => Viewer;
}

export function consoleApi(deps: ConsoleApiDependencies): Hono<AppEnv> {
  const { stores } = deps;
  const app = new Hono<AppEnv>();
  const answer = (c: Context<AppEnv>, work: (viewer: Viewer) => Promise<unknown>) => answerOr(deps.reportError, c, () => work(deps.viewerOf(c)));
  const unseen = (project: string, env: string) => new AdminRefusal("NOT_FOUND", `no bundle for ${project}/${env}`);

  /** The project's current bundle, when the viewer may see it. */
  const seenBundle = async (viewer: Viewer, project: string, env: string) => {
    const stored = await stores.bundles.get(project, env);
    if (stored === undefined || !sees(viewer, stored.bundle)) throw unseen(project, env);
    return stored;
  };
  const seenVersion = async (viewer: Viewer, where: { project: string; env: string }, version: string) => {
    await seenBundle(viewer, where.project, where.env);
    const stored = await stores.bundles.historyVersion(where.project, where.env, version);
    if (stored === undefined) throw new AdminRefusal("NOT_FOUND", `no version ${version} of ${where.project}/${where.env} in the history`);
    return stored;
  };

  app.get("/session", (c) => answer(c, async (viewer) => viewer));
  app.get("/projects", (c) => answer(c, async (viewer) => ({ bundles: (await stores.bundles.list()).filter((b) => sees(viewer, b)) })));
  app.get("/projects/:project/:env", (c) => answer(c, (viewer) => seenBundle(viewer, c.req.param("project"), c.req.param("env"))));
  app.get("/projects/:project/:env/history", (c) =>
    answer(c, async (viewer) => {
      const { project, env } = c.req.param();
      const current = await seenBundle(viewer, project, env);
      return { versions: await stores.bundles.history(project, env), current: current.bundle.version };
    }),
  );
  app.get("/projects/:project/:env/diff", (c) =>
    answer(c, async (viewer) => {
      const { from, to } = c.req.query();
      if (from === undefined || to === undefined) throw new AdminRefusal("BAD_REQUEST", "from and to must name two versions of the history");
      const [before, after] = await Promise.all([seenVersion(viewer, c.req.param(), from), seenVersion(viewer, c.req.param(), to)]);
      return { from, to, lines: diffBundles(before.bundle, after.bundle) };
    }),
  );

  // `vane report POLICY`: the policy's decisions and track events read as the verb reads them
  // (DuckDB over the archive and the log's tail on Node), archived events the log pruned included;
  // with the decisions per arm per day, from the same read.
  app.get("/projects/:project/:env/policies/:policy/report", (c) =>
    answer(c, async (viewer) => {
      const { project, env, policy: ref } = c.req.param();
      const { bundle } = await seenBundle(viewer, project, env);
      const policy = bundle.layers.flatMap((layer) => layer.policies).find((p) => p.id === ref);
      if (policy === undefined) throw new AdminRefusal("NOT_FOUND", `no policy ${ref} in the bundle of ${project}/${env}`);
      const subject = { policy, orgId: bundle.orgId, projectId: project, env };
      const outcomes = await deps.readEvents((reads) => readPolicyOutcomes(reads, subject));
      const nowMs = deps.clock.now();
      const refused = refusal(subject, outcomes.counts(nowMs));
      const daily = outcomes.dailyDecisions();
      return refused === undefined ? { report: policyReport(subject, outcomes, nowMs), daily } : { refused, daily };
    }),
  );

  // A bandit's weights over time: the policy's weights in each version of the history that holds
  // it (the learner's publications and the operators'), oldest first; an equal split where a
  // version has none, as the live bundle draws it.
  app.get("/projects/:project/:env/policies/:policy/weights", (c) =>
    answer(c, async (viewer) => {
      const { project, env, policy: ref } = c.req.param();
      await seenBundle(viewer, project, env);
      const entries = (await stores.bundles.history(project, env)).slice().reverse();
      const versions = await Promise.all(entries.map((entry) => stores.bundles.historyVersion(project, env, entry.version)));
      const points = [];
      for (const [i, entry] of entries.entries()) {
        const stored = versions[i];
        const policy = stored?.bundle.layers.flatMap((layer) => layer.policies).find((p) => p.id === ref);
        if (policy === undefined || policy.kind === "static") continue;
        const weights = policy.weights ?? policy.allocations.map(() => 1 / policy.allocations.length);
        points.push({ version: entry.version, storedAt: entry.storedAt, by: entry.by, arms: policy.allocations.map((a, i) => ({ key: a.key, weight: weights[i] ?? 0 })) });
      }
      return { points };
    }),
  );

  // `vane results POLICY` with the verb's options from the URL (?metric=…&guardrail=…&window=…&since=…&until=…).
  app.get("/projects/:project/:env/policies/:policy/results", (c) =>
    answer(c, async (viewer) => {
      const { project, env, policy: ref } = c.req.param();
      const { bundle } = await seenBundle(viewer, project, env);
      const found = bundle.layers.flatMap((layer) => layer.policies.map((policy) => ({ policy, layerId: layer.id }))).find((p) => p.policy.id === ref);
      if (found === undefined) throw new AdminRefusal("NOT_FOUND", `no policy ${ref} in the bundle of ${project}/${env}`);
      if (deps.results === undefined) throw new AdminRefusal("NOT_FOUND", "experiment results are computed from the data folder's SQLite store: this server has none");
      const query = (name: string) => c.req.queries(name) ?? [];
      return deps.results(
        { ...found, orgId: bundle.orgId, projectId: project, env },
        { metric: query("metric"), guardrail: query("guardrail"), window: query("window"), since: c.req.query("since"), until: c.req.query("until"), now: new Date(deps.clock.now()).toISOString() },
      );
    }),
  );

  // The writes: admin-token sessions only (a console:read key reads), after the page showed the diff.
  const adminBody = async (c: Context<AppEnv>): Promise<Record<string, unknown> | Response> => {
    if (deps.viewerOf(c).who !== ADMIN) return fail(c, "FORBIDDEN", "Only an admin-token session may publish; a console:read key only reads");
    const body = await readJson(c);
    if (!body.ok) return badRequest(c, body.message);
    return isObject(body.value) ? body.value : badRequest(c, "The body must be a JSON object");
  };
  app.post("/projects/:project/:env/rollback", async (c) => {
    const body = await adminBody(c);
    if (body instanceof Response) return body;
    const { version } = body;
    if (typeof version !== "string" || version === "") return badRequest(c, 'The body must be { "version": "…" }, a version of the history');
    const { project, env } = c.req.param();
    return answer(c, async (viewer) => {
      await seenBundle(viewer, project, env);
      return deps.operations.rollbackBundle({ project, env }, version);
    });
  });
  // `vane flags set` / `vane rollout` without publishing: the diff the page shows, from the stored version (`base`).
  app.post("/projects/:project/:env/changes/diff", async (c) => {
    const body = await adminBody(c);
    if (body instanceof Response) return body;
    const edit = editOf(body.change);
    if (typeof edit === "string") return badRequest(c, edit);
    const { project, env } = c.req.param();
    return answer(c, async (viewer) => {
      await seenBundle(viewer, project, env);
      const { stored, bundle, note } = await editBundle(stores.bundles, { where: { project, env }, edit }, deps.clock.now());
      return { base: stored.version, lines: diffBundles(stored, bundle), note };
    });
  });
  // The same change published, when the stored version is still the one the diff was made from.
  app.post("/projects/:project/:env/changes", async (c) => {
    const body = await adminBody(c);
    if (body instanceof Response) return body;
    const edit = editOf(body.change);
    if (typeof edit === "string") return badRequest(c, edit);
    if (typeof body.base !== "string") return badRequest(c, "base must name the version the diff was made from");
    const { base } = body;
    const { project, env } = c.req.param();
    return answer(c, async (viewer) => {
      await seenBundle(viewer, project, env);
      const { stored, bundle, note } = await editBundle(stores.bundles, { where: { project, env }, edit }, deps.clock.now());
      if (stored.version !== base) throw new AdminRefusal("BAD_REQUEST", `${project}/${env} changed since the diff was made (version ${stored.version} now, not ${base}): look at the diff again`);
      return { ...(await deps.operations.publishBundle(bundle, { base })), note };
    });
  });

  app.get("/keys", (c) =>
    answer(c, async (viewer) => {
      const now = deps.clock.now();
      const keys = (await stores.keys.list()).filter((k) => sees(viewer, k)).map(publicKey);
      return { keys: keys.map((key) => ({ ...key, status: keyStatus(key, now), ...deps.usage.figures(key.id) })) };
    }),
  );

  app.get("/events", (c) =>
    answer(c, async (viewer) => {
      const scope = { ...(viewer.orgId !== undefined && { orgId: viewer.orgId }), ...(viewer.projectId !== undefined && { projectId: viewer.projectId }) };
      const failures = deps.failures.list().filter((f) => sees(viewer, f));
      return deps.readEvents(async (reads) => {
        // One read at a time: the reads may share one DuckDB connection.
        const counts: [string, number][] = [];
        for (const type of EVENT_TYPES) counts.push([type, await countEvents(reads, { ...scope, type })]);
        const discovered = (await reads.discovered()).filter((d) => sees(viewer, d));
        // The newest events, as `vane events list` shows them (the body is the sender's: kept out).
        const last = (await listEvents(reads, { ...scope, limit: LAST_EVENTS })).map(eventRow);
        return { counts: Object.fromEntries(counts), discovered, last, failures };
      });
    }),
  );

  // A page's live updates (live.ts): ?project=P&env=E adds that bundle's new versions.
  app.get("/live", async (c) => {
    const viewer = deps.viewerOf(c);
    const { project, env } = c.req.query();
    if ((project === undefined) !== (env === undefined)) return badRequest(c, "project and env go together");
    if (deps.admitStream?.() === false) return fail(c, "SERVICE_UNAVAILABLE", "Too many open streams, retry shortly", RETRY_AFTER_SECONDS.config);
    if (project === undefined || env === undefined) return deps.live.stream(viewer, undefined);
    let version: string;
    try {
      version = (await seenBundle(viewer, project, env)).bundle.version;
    } catch (error) {
      // A 404 for a bundle the viewer may not see, a 503 when the store cannot tell: as the other reads answer.
      return answer(c, () => Promise.reject(error));
    }
    return deps.live.stream(viewer, { projectId: project, env, version });
  });

  app.get("/health", (c) =>
    answer(c, async () => {
      const scraped = await deps.metrics?.scrape();
      return { health: await deps.health(), metrics: scraped === undefined ? null : metricsFigures(scraped.body) };
    }),
  );
  return app;
}

/** A change as the console sends it: `{ kind: "flag", key, value }` or `{ kind: "rollout", policy, percent }`, values as typed on the command line; otherwise what is wrong. */
function editOf(change: unknown): BundleEdit | string {
  const usage = 'change must be { "kind": "flag", "key": "…", "value": "…" } or { "kind": "rollout", "policy": "…", "percent": "…" }';
  if (!isObject(change)) return usage;
  if (change.kind === "flag" && typeof change.key === "string" && typeof change.value === "string") return { kind: "flag", key: change.key, value: change.value };
  if (change.kind === "rollout" && typeof change.policy === "string" && typeof change.percent === "string") return { kind: "rollout", policy: change.policy, percent: change.percent };
  return usage;
}
