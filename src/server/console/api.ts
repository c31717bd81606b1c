// The JSON the console's pages read, under /console/api: the same stores and admin reads the CLI
// runs (`vane bundles get|history|diff`, `vane results`, `vane report`, `vane keys list`, `vane events
// count|discovered`), cut to what the session's viewer may see. One write, for admin-token
// sessions only: a rollback, as `vane bundles rollback` does it. Another organization's project
// answers 404, as one that does not exist.
import { type Context, Hono } from "hono";
import { readPolicyOutcomes } from "../../analysis/outcomes.js";
import { policyReport, refusal } from "../../analysis/policy-report.js";
import { diffBundles } from "../../bundle/diff.js";
import type { Stores } from "../../store/types.js";
import { answerOr } from "../admin/routes.js";
import { EVENT_TYPES, type ReadEvents, countEvents, listEvents } from "../admin/event-reads.js";
import { keyStatus } from "../admin/key-operations.js";
import { type Published, publicKey } from "../admin/operations.js";
import { AdminRefusal } from "../admin/refusal.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { badRequest, fail } from "../errors.js";
import { isObject, readJson } from "../request.js";
import type { ServiceMetrics } from "../observability/types.js";
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
  /** `vane bundles rollback`: the admin operation, with its checks and its new version in the history. */
  readonly rollback: (where: { project: string; env: string }, version: string) => Promise<Published>;
  /** The signed-in viewer of the request (the session middleware found it). */
  readonly viewerOf: (c: Context<AppEnv>) => Viewer;
}

/** How many of the newest events the events page lists. */
const LAST_EVENTS = 20;

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

  // `vane report POLICY`: streams the whole event log, as the verb does.
  app.get("/projects/:project/:env/policies/:policy/report", (c) =>
    answer(c, async (viewer) => {
      const { project, env, policy: ref } = c.req.param();
      const { bundle } = await seenBundle(viewer, project, env);
      const policy = bundle.layers.flatMap((layer) => layer.policies).find((p) => p.id === ref);
      if (policy === undefined) throw new AdminRefusal("NOT_FOUND", `no policy ${ref} in the bundle of ${project}/${env}`);
      const subject = { policy, orgId: bundle.orgId, projectId: project, env };
      const outcomes = await readPolicyOutcomes(stores.events, subject);
      const nowMs = deps.clock.now();
      const refused = refusal(subject, outcomes.counts(nowMs));
      return refused === undefined ? { report: policyReport(subject, outcomes, nowMs) } : { refused };
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

  // The one write: admin-token sessions only (a console:read key reads), after the page showed the diff.
  app.post("/projects/:project/:env/rollback", async (c) => {
    const viewer = deps.viewerOf(c);
    if (viewer.who !== ADMIN) return fail(c, "FORBIDDEN", "Only an admin-token session may publish; a console:read key only reads");
    const body = await readJson(c);
    if (!body.ok) return badRequest(c, body.message);
    const version = isObject(body.value) ? body.value.version : undefined;
    if (typeof version !== "string" || version === "") return badRequest(c, 'The body must be { "version": "…" }, a version of the history');
    const { project, env } = c.req.param();
    return answer(c, async () => {
      await seenBundle(viewer, project, env);
      return deps.rollback({ project, env }, version);
    });
  });

  app.get("/keys", (c) =>
    answer(c, async (viewer) => {
      const now = deps.clock.now();
      const keys = (await stores.keys.list()).filter((k) => sees(viewer, k)).map(publicKey);
      return { keys: keys.map((key) => ({ ...key, status: keyStatus(key, now) })) };
    }),
  );

  app.get("/events", (c) =>
    answer(c, async (viewer) => {
      const scope = { ...(viewer.orgId !== undefined && { orgId: viewer.orgId }), ...(viewer.projectId !== undefined && { projectId: viewer.projectId }) };
      return deps.readEvents(async (reads) => {
        // One read at a time: the reads may share one DuckDB connection.
        const counts: [string, number][] = [];
        for (const type of EVENT_TYPES) counts.push([type, await countEvents(reads, { ...scope, type })]);
        const discovered = (await reads.discovered()).filter((d) => sees(viewer, d));
        // The newest events, as `vane events list` shows them (the body is the sender's: kept out).
        const last = (await listEvents(reads, { ...scope, limit: LAST_EVENTS })).map(({ seq, event }) => ({
          seq,
          type: event.type,
          ...(event.name !== undefined && { name: event.name }),
          projectId: event.projectId,
          env: event.env,
          unitKey: event.unitKey,
          receivedAt: event.receivedAt,
        }));
        return { counts: Object.fromEntries(counts), discovered, last };
      });
    }),
  );

  app.get("/health", (c) =>
    answer(c, async () => {
      const scraped = await deps.metrics?.scrape();
      return { health: await deps.health(), metrics: scraped === undefined ? null : metricsFigures(scraped.body) };
    }),
  );
  return app;
}
