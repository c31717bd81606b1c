// Every analytical read of events, through DuckDB: one in-memory database per reader over the
// Parquet archive's files (through its checkpoint) and the log's tail after it, read from the
// store and loaded with DuckDB's appender. Together they are every acknowledged event exactly
// once: a file holds only events its delivery read before advancing the checkpoint, and the tail
// starts after it. The verbs (`events`, `report`, `results`) ask this view; statistics sit above.
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import type { DiscoveredEvent, EventFilter, EventStore, EventType, SequencedEvent } from "../types.js";
import { sequencedEvent } from "../event-records.js";
import { PARQUET_PIPELINE } from "../parquet/pipeline.js";
import { cover } from "../parquet/partitions.js";
import { archiveSelect, listArchive } from "./archive-files.js";
import { appendEvents, createEventTable, LAYERS_OF_BODY, VALUE_OF_BODY } from "./event-table.js";
import { type Duck, type DuckSettings, openDuck, sqlString } from "./duck.js";

export interface ViewSources {
  readonly events: EventStore;
  /** The archive's root: DATA/parquet, or the folder servers on a shared store write. */
  readonly parquetDir: string;
  readonly settings?: DuckSettings;
}

/** Events per readAfter of the tail. */
const TAIL_PAGE = 5_000;
/** Times a read is retried when a file it listed was compacted away meanwhile. */
const FILE_RETRIES = 3;

/** The columns an event is rebuilt from, in this order. */
const EVENT_SELECT = "seq, id, received_ms, org_id, project_id, env, type, unit_key, event_timestamp, name, decision_id, discovered, body";

export type Params = Record<string, DuckDBValue>;

export class EventView {
  private constructor(
    private readonly duck: Duck,
    private readonly sources: ViewSources,
    /** The archive's checkpoint: files give the events through it, the tail those after. */
    readonly through: number,
  ) {}

  static async open(sources: ViewSources): Promise<EventView> {
    const duck = await openDuck(sources.settings);
    try {
      const through = await sources.events.checkpoint(PARQUET_PIPELINE);
      const view = new EventView(duck, sources, through);
      await view.loadTail();
      await view.defineEvents();
      return view;
    } catch (error) {
      duck.close();
      throw error;
    }
  }

  get connection(): DuckDBConnection {
    return this.duck.connection;
  }

  /** Rows of `sql` over the `events` view, as plain JS values; retried when the archive's files moved. */
  async rows(sql: string, params: Params = {}): Promise<Record<string, unknown>[]> {
    return this.retrying(async () => (await this.duck.connection.runAndReadAll(sql, params)).getRowObjectsJS());
  }

  /** Runs a statement (a temp table of a read); retried like rows(). */
  async run(sql: string, params: Params = {}): Promise<void> {
    await this.retrying(() => this.duck.connection.run(sql, params));
  }

  async count(filter: Omit<EventFilter, "limit"> = {}): Promise<number> {
    const { where, params } = whereOf(filter);
    const [row] = await this.rows(`SELECT count(*) AS n FROM events ${where}`, params);
    return Number(row!.n);
  }

  /**
   * Newest first. The seqs first, then their rows: a range of seqs lets DuckDB skip the row groups
   * outside it, where one query would read every body to keep a few.
   */
  async list(filter: EventFilter & { readonly limit: number }): Promise<SequencedEvent[]> {
    const { where, params } = whereOf(filter);
    const seqs = (await this.rows(`SELECT seq FROM events ${where} ORDER BY seq DESC LIMIT ${Math.floor(filter.limit)}`, params)).map((row) => Number(row.seq));
    if (seqs.length === 0) return [];
    const range = `seq BETWEEN ${seqs.at(-1)} AND ${seqs[0]} AND seq IN (${seqs.join(", ")})`;
    return (await this.rows(`SELECT ${EVENT_SELECT} FROM events WHERE ${range} ORDER BY seq DESC`)).map(eventOf);
  }

  async orgsWithEvents(projectId: string): Promise<string[]> {
    const rows = await this.rows("SELECT DISTINCT org_id FROM events WHERE project_id = $project ORDER BY org_id", { project: projectId });
    return rows.map((row) => row.org_id as string);
  }

  /** Track events whose name no event definition had, per org, project, env and name. */
  async discovered(): Promise<DiscoveredEvent[]> {
    const rows = await this.rows(`
      SELECT org_id, project_id, env, name, count(*) AS n, min(received_ms) AS first_ms, max(received_ms) AS last_ms
      FROM events WHERE discovered AND type = 'track' AND name IS NOT NULL
      GROUP BY org_id, project_id, env, name ORDER BY org_id, project_id, env, name`);
    return rows.map((row) => ({
      orgId: row.org_id as string,
      projectId: row.project_id as string,
      env: row.env as string,
      name: row.name as string,
      count: Number(row.n),
      firstSeen: isoOf(row.first_ms),
      lastSeen: isoOf(row.last_ms),
    }));
  }

  /** The events of one org, project and env with these types, in seq order, a chunk at a time. */
  async scan(scope: { orgId: string; projectId: string; env: string; types: readonly EventType[] }, visit: (event: SequencedEvent) => void): Promise<void> {
    const types = scope.types.map(sqlString).join(", ");
    const sql = `SELECT ${EVENT_SELECT} FROM events WHERE org_id = $org AND project_id = $project AND env = $env AND type IN (${types}) ORDER BY seq`;
    await this.retrying(async () => {
      const result = await this.duck.connection.stream(sql, { org: scope.orgId, project: scope.projectId, env: scope.env });
      const columns = result.columnNames();
      for await (const rows of result.yieldRowsJs()) {
        for (const values of rows) visit(eventOf(Object.fromEntries(columns.map((c, i) => [c, values[i]]))));
      }
    });
  }

  close(): void {
    this.duck.close();
  }

  private async loadTail(): Promise<void> {
    await createEventTable(this.duck.connection, "tail");
    for (let after = this.through; ; ) {
      const page = await this.sources.events.readAfter(after, TAIL_PAGE);
      await appendEvents(this.duck.connection, "tail", page);
      if (page.length < TAIL_PAGE) return;
      after = page[page.length - 1]!.seq;
    }
  }

  /** `events`: the covering files' rows through the checkpoint, then the tail (BY NAME: a file of before `discovered` lacks it). */
  private async defineEvents(): Promise<void> {
    const files = cover(await listArchive(this.sources.parquetDir), this.through).map((f) => f.absolute);
    // Events through the checkpoint are only in the files: without any, the read would miss them all.
    if (files.length === 0 && this.through > 0) {
      throw new Error(`the Parquet archive holds events 1..${this.through} of this store, but ${this.sources.parquetDir} has no Parquet files: pass --parquet with the servers' folder`);
    }
    const archived =
      files.length === 0
        ? ""
        : `SELECT * EXCLUDE (received_at, event_time), epoch_ms(received_at) AS received_ms, epoch_ms(event_time) AS event_ms
           FROM (${await archiveSelect(this.duck.connection, files)})
           WHERE seq <= ${this.through} UNION ALL BY NAME `;
    // event_ms: when the event happened (store/event-time.ts), the files' event_time or the tail's event_ms.
    await this.duck.connection.run(`CREATE OR REPLACE VIEW events AS
      ${archived}SELECT *, ${LAYERS_OF_BODY} AS layers, ${VALUE_OF_BODY} AS value FROM tail`);
  }

  private async retrying<T>(read: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read();
      } catch (error) {
        if (attempt > FILE_RETRIES || !isMissingFile(error)) throw error;
        await this.defineEvents(); // a compaction replaced files: list them again
      }
    }
  }
}

function whereOf(filter: Omit<EventFilter, "limit">): { where: string; params: Params } {
  const terms: string[] = [];
  const params: Params = {};
  if (filter.orgId !== undefined) (terms.push("org_id = $org"), (params.org = filter.orgId));
  if (filter.projectId !== undefined) (terms.push("project_id = $project"), (params.project = filter.projectId));
  if (filter.type !== undefined) (terms.push("type = $type"), (params.type = filter.type));
  return { where: terms.length === 0 ? "" : `WHERE ${terms.join(" AND ")}`, params };
}

function eventOf(row: Record<string, unknown>): SequencedEvent {
  const columns = {
    seq: Number(row.seq),
    id: row.id as string,
    received_at: isoOf(row.received_ms),
    org_id: row.org_id as string,
    project_id: row.project_id as string,
    env: row.env as string,
    type: row.type as string,
    unit_key: row.unit_key as string,
    timestamp: row.event_timestamp as string,
    name: (row.name ?? null) as string | null,
    decision_id: (row.decision_id ?? null) as string | null,
  };
  return sequencedEvent(columns, JSON.parse(row.body as string) as Record<string, unknown>, (row.discovered ?? undefined) as boolean | undefined);
}

function isoOf(millis: unknown): string {
  return new Date(Number(millis)).toISOString();
}

function isMissingFile(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /No such file|No files found|Cannot open file|No files? found/i.test(message);
}
