// `vane events discovered|list|count`: a look at stored events from the command line, read
// through DuckDB over the Parquet archive and the log's tail (event-reads.ts). `list` prints one
// compact JSON object per line (newest first), so its output pipes into jq.
import { join } from "node:path";
import { DAY_MS, DEFAULT_RETENTION, HOUR_MS, pruneEvents } from "../store/retention.js";
import { pruneArchive } from "../store/parquet/archive-retention.js";
import { NodeFileSink } from "../store/parquet/file-sink.js";
import { EVENT_TYPES, MAX_EVENTS_LISTED, countEvents, listEvents } from "../server/admin/event-reads.js";
import type { EventsFilter } from "../server/admin/operations.js";
import type { EventType, SequencedEvent } from "../store/types.js";
import { dataHelp, UsageError, integerOption, parseVerbArgs, STORE_OPTIONS } from "./args.js";
import { durationOption } from "./duration-option.js";
import { shortTime, table } from "./output.js";
import { READ_OPTIONS, readHelp, withEventView } from "./event-reads.js";
import { REMOTE_STORE_OPTIONS, remoteHelp, withOpenedStores, withStores, describeStore } from "./store-access.js";
import type { Verb, VerbGroup } from "./verb.js";

const DEFAULT_LIMIT = 20;

const DISCOVERED_USAGE = `Usage: vane events discovered [--data DIR]

Lists auto-discovered events: track events whose name no event definition of their bundle has,
per project and env, with how often and when they were first and last seen.
${dataHelp(19)}
${readHelp(19)}
${remoteHelp(19)}`;

const FILTER_HELP = `  --org O          only events of organization O
  --project P      only events of project P (a project with events of two organizations needs --org)
  --type T         only events of type T: ${EVENT_TYPES.join(", ")}`;

const LIST_USAGE = `Usage: vane events list [--org O] [--project P] [--type T] [--limit ${DEFAULT_LIMIT}] [--data DIR]

Prints stored events newest first, one compact JSON object per line: the event as accepted
(tenant fields set from its key) with seq, id, receivedAt and discovered.
${FILTER_HELP}
  --limit N        at most N events (default ${DEFAULT_LIMIT})
${dataHelp(19)}
${readHelp(19)}
${remoteHelp(19)}`;

const COUNT_USAGE = `Usage: vane events count [--org O] [--project P] [--type T] [--data DIR]

Prints how many events are stored.
${FILTER_HELP}
${dataHelp(19)}
${readHelp(19)}
${remoteHelp(19)}`;

const PRUNE_USAGE = `Usage: vane events prune [--retain-days ${DEFAULT_RETENTION.retainMs / DAY_MS}] [--dedup-hours ${DEFAULT_RETENTION.dedupWindowMs / HOUR_MS}]
                        [--archive-retain-days D] [--parquet DIR] [--data DIR]

Deletes events received more than --retain-days ago that every derived copy (the Parquet files
and the learner) has read past, and forgets event ids older than --dedup-hours; \`vane serve\` does
the same every minute with its own options. The Parquet archive is kept unless --archive-retain-days
is given.
  --retain-days D  keep events this many days (default ${DEFAULT_RETENTION.retainMs / DAY_MS}; fractions allowed)
  --dedup-hours H  recognise a resent event id this many hours (default ${DEFAULT_RETENTION.dedupWindowMs / HOUR_MS})
  --archive-retain-days D
                   also delete the Parquet archive's events received more than D days ago: whole
                   days' folders, and the day D days ago rewritten without its older events
                   (default: none deleted, the archive is the long-term record)
  --parquet DIR    the archive's folder (default DATA/parquet; on a shared store, the servers' --parquet)
${dataHelp(17)}`;

/** Here: DuckDB over the archive and the log's tail; with --remote: the server's admin API. */
const VIEW_OPTIONS = { ...REMOTE_STORE_OPTIONS, ...READ_OPTIONS };
const FILTER_OPTIONS = { ...VIEW_OPTIONS, org: { type: "string" }, project: { type: "string" }, type: { type: "string" } } as const;

function filterOf(values: { org?: string; project?: string; type?: string }, usage: string): EventsFilter {
  const type = values.type as EventType | undefined;
  if (type !== undefined && !EVENT_TYPES.includes(type)) throw new UsageError(`--type must be one of ${EVENT_TYPES.join(", ")}, got "${values.type}"`, usage);
  return {
    ...(values.org !== undefined && { orgId: values.org }),
    ...(values.project !== undefined && { projectId: values.project }),
    ...(type !== undefined && { type }),
  };
}

/** The line `events list` prints: the accepted body, led by what the server added. */
export function eventLine({ seq, event }: SequencedEvent): string {
  const added = { seq, id: event.id, receivedAt: event.receivedAt, ...(event.discovered === true && { discovered: true }) };
  // Ours first in the line, and ours win: a body field named `id` must not hide the stored id.
  return JSON.stringify(Object.assign({ ...added }, event.body, added));
}

const discoveredVerb: Verb = {
  name: "discovered",
  summary: "auto-discovered event names with counts",
  usage: DISCOVERED_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: DISCOVERED_USAGE, options: VIEW_OPTIONS, positionals: [0, 0] });
    const found = values.remote !== undefined
      ? await withStores(values, "existing", (stores) => stores.admin.discoveredEvents())
      : await withEventView(values, DISCOVERED_USAGE, (view) => view.discovered());
    if (found.length === 0) {
      io.out(`No auto-discovered events in ${describeStore(values)}.`);
      return 0;
    }
    const rows = found.map((d) => [d.projectId, d.env, d.orgId, d.name, String(d.count), shortTime(d.firstSeen), shortTime(d.lastSeen)]);
    io.out(table(["PROJECT", "ENV", "ORG", "EVENT", "COUNT", "FIRST SEEN", "LAST SEEN"], rows));
    return 0;
  },
};

const listVerb: Verb = {
  name: "list",
  summary: "stored events, newest first, as JSON lines",
  usage: LIST_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, {
      usage: LIST_USAGE,
      options: { ...FILTER_OPTIONS, limit: { type: "string", default: String(DEFAULT_LIMIT) } },
      positionals: [0, 0],
    });
    const limit = integerOption(values.limit, "--limit", { min: 1, max: MAX_EVENTS_LISTED, usage: LIST_USAGE });
    const filter = filterOf(values, LIST_USAGE);
    const events = values.remote !== undefined
      ? await withStores(values, "existing", (stores) => stores.admin.listEvents({ ...filter, limit }))
      : await withEventView(values, LIST_USAGE, (view) => listEvents(view, { ...filter, limit }));
    // The note goes to stderr: stdout stays pure JSON lines.
    if (events.length === 0) io.err("(no events)");
    for (const event of events) io.out(eventLine(event));
    return 0;
  },
};

const countVerb: Verb = {
  name: "count",
  summary: "how many events are stored",
  usage: COUNT_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: COUNT_USAGE, options: FILTER_OPTIONS, positionals: [0, 0] });
    const filter = filterOf(values, COUNT_USAGE);
    const count = values.remote !== undefined
      ? await withStores(values, "existing", (stores) => stores.admin.countEvents(filter))
      : await withEventView(values, COUNT_USAGE, (view) => countEvents(view, filter));
    io.out(String(count));
    return 0;
  },
};

const pruneVerb: Verb = {
  name: "prune",
  summary: "delete events past retention that every derived copy has read",
  usage: PRUNE_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, {
      usage: PRUNE_USAGE,
      options: {
        ...STORE_OPTIONS,
        "retain-days": { type: "string", default: String(DEFAULT_RETENTION.retainMs / DAY_MS) },
        "dedup-hours": { type: "string", default: String(DEFAULT_RETENTION.dedupWindowMs / HOUR_MS) },
        "archive-retain-days": { type: "string" },
        parquet: { type: "string" },
      },
      positionals: [0, 0],
    });
    const retention = {
      retainMs: durationOption(values["retain-days"], "--retain-days", { unitMs: DAY_MS, usage: PRUNE_USAGE }),
      dedupWindowMs: durationOption(values["dedup-hours"], "--dedup-hours", { unitMs: HOUR_MS, usage: PRUNE_USAGE }),
    };
    const archiveRetainMs = values["archive-retain-days"] === undefined ? undefined : durationOption(values["archive-retain-days"], "--archive-retain-days", { unitMs: DAY_MS, usage: PRUNE_USAGE });
    const now = Date.now();
    const pruned = await withOpenedStores(values, "existing", (stores) => pruneEvents(stores.events, retention, now));
    io.out(`Pruned ${pruned.events} events and ${pruned.eventIds} remembered event ids from ${describeStore(values)}.`);
    if (archiveRetainMs !== undefined) {
      const cutoff = now - archiveRetainMs;
      const archived = await pruneArchive(new NodeFileSink(values.parquet ?? join(values.data, "parquet")), cutoff);
      io.out(`The Parquet archive: events received before ${new Date(cutoff).toISOString()} deleted (${archived.filesDeleted} files deleted, ${archived.filesRewritten} rewritten).`);
    }
    return 0;
  },
};

export const eventsGroup: VerbGroup = {
  name: "events",
  summary: "look at, count and prune stored events",
  verbs: [discoveredVerb, listVerb, countVerb, pruneVerb],
};
