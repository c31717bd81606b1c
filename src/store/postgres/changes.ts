// Changes to bundles and keys told to every server at once (LISTEN/NOTIFY). The notification is
// sent inside the writing transaction, so PostgreSQL delivers it only if and once that commits.
import pg from "pg";
import { settleWithin } from "../../lib/settle-within.js";
import type { ChangeFeed, StoreChange } from "../types.js";
import { type Queryable, run } from "./db.js";

export const CHANGES_CHANNEL = "vane_changes";
/** Waits between attempts to listen again after the listening connection was lost: doubling, capped. */
export const RELISTEN_FIRST_MS = 100;
export const RELISTEN_MAX_MS = 5_000;
/**
 * How long a listening connection's end() is waited for before its socket is destroyed: end()
 * sends its goodbye and waits for the server to close, which a dropped connection (a server or a
 * network gone without a word) never does, and the stores' close waited with it.
 */
export const LISTEN_END_MS = 2_000;

async function endClient(client: pg.Client): Promise<void> {
  if ((await settleWithin(client.end(), LISTEN_END_MS)) === "late") client.connection.stream.destroy();
}

export async function notifyChange(db: Queryable, change: StoreChange): Promise<void> {
  await run(db, "SELECT pg_notify($1, $2)", [CHANGES_CHANNEL, JSON.stringify(change)]);
}

function parseChange(payload: string): StoreChange | undefined {
  try {
    const change = JSON.parse(payload) as Partial<Record<string, unknown>>;
    if (change.kind === "bundle" && typeof change.projectId === "string" && typeof change.env === "string") return { kind: "bundle", projectId: change.projectId, env: change.env };
    if (change.kind === "key" && typeof change.secretHash === "string") return { kind: "key", secretHash: change.secretHash };
  } catch {
    // Not ours (another program on the channel): ignored.
  }
  return undefined;
}

/**
 * One listener on a connection of its own: a pooled one would go back to the pool, and LISTEN
 * holds only while its session lives. When that connection drops (the database restarted), it
 * connects and listens again, waiting longer after each failure. Notifications sent meanwhile are
 * lost; the caches' own refresh covers them.
 */
class Listening {
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private waitMs = RELISTEN_FIRST_MS;
  private stopped = false;
  private listened: (() => void) | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly listener: (change: StoreChange) => void,
  ) {}

  /** Resolves once listening (retrying until then), or when stopped first. */
  start(): Promise<void> {
    const listening = new Promise<void>((resolve) => (this.listened = resolve));
    void this.connect();
    return listening;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.listened?.();
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) await endClient(client);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client(this.config);
    this.client = client;
    let lost = false;
    const reconnect = () => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      void endClient(client); // bounded too: its socket is not left open
      this.scheduleRetry();
    };
    client.on("error", reconnect); // also keeps a dropped connection from ending the process
    client.on("end", reconnect);
    client.on("notification", (message) => {
      if (message.channel !== CHANGES_CHANNEL || message.payload === undefined) return;
      const change = parseChange(message.payload);
      if (change !== undefined) this.listener(change);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch {
      reconnect();
      return;
    }
    if (this.stopped || lost) return;
    this.waitMs = RELISTEN_FIRST_MS;
    this.listened?.();
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    const wait = this.waitMs;
    this.waitMs = Math.min(wait * 2, RELISTEN_MAX_MS);
    this.retry = setTimeout(() => void this.connect(), wait);
    this.retry.unref(); // a process done with its work (the CLI) need not wait for the database to come back
  }
}

export class PostgresChangeFeed implements ChangeFeed {
  private readonly listenings = new Set<Listening>();

  constructor(private readonly config: pg.ClientConfig) {}

  async listen(listener: (change: StoreChange) => void): Promise<() => Promise<void>> {
    const listening = new Listening(this.config, listener);
    this.listenings.add(listening);
    await listening.start();
    return async () => {
      this.listenings.delete(listening);
      await listening.stop();
    };
  }

  /** Stops every listener (the stores are closing). */
  async close(): Promise<void> {
    const all = [...this.listenings];
    this.listenings.clear();
    await Promise.all(all.map((listening) => listening.stop()));
  }
}
