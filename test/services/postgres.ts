// A private PostgreSQL server for one test file: initdb into a temp folder, on a free 127.0.0.1
// port, trust auth for user `vane`. It needs only the installed binaries (Debian's
// /usr/lib/postgresql/<v>/bin), not a running service. PostgreSQL refuses to run as root, so as
// root (CI) it runs as the `postgres` user, or `nobody` when there is none. The server is this
// process's child (not pg_ctl's daemon), so its exit is reaped and a kill leaves no stale lock.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";
import { WAIT_MS } from "../wait.js";

const run = promisify(execFile);
const USER = "vane";
/** Small: the machine's cores and memory are shared with other test files. */
const SERVER_SETTINGS = ["shared_buffers=16MB", "max_connections=50", "listen_addresses=127.0.0.1"];
const START_TIMEOUT_MS = WAIT_MS;

export interface PostgresService {
  /** The URL of a database on this server. */
  url(database: string): string;
  /** A fresh, empty database; its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server and deletes its folder. */
  stop(): Promise<void>;
  /** Ends the server and its backends at once with SIGKILL, as a crash would; the data stays for restart(). */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data. */
  restart(): Promise<void>;
}

export interface PostgresServiceOptions {
  /** Default false: fast, and a killed server only loses what it had not written to the OS. */
  readonly fsync?: boolean;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`no PostgreSQL binaries under ${root}/*/bin (apt-get install postgresql)`);
  return join(root, newest, "bin");
}

/** The non-root user to run the server as, or undefined when we are not root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const id = (flag: string) => Number(execFileSync("id", [flag, name], { encoding: "utf8" }).trim());
      return { uid: id("-u"), gid: id("-g") };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL");
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** The pids whose parent is `parent`, from /proc. */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) may hold spaces: split after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent) children.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return children;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

export async function startPostgres(options: PostgresServiceOptions = {}): Promise<PostgresService> {
  const bin = binDir();
  const user = serverUser();
  const root = mkdtempSync(join(tmpdir(), "vane-pg-"));
  const data = join(root, "data");
  const socketDir = join(root, "socket");
  mkdirSync(socketDir);
  if (user) for (const dir of [root, socketDir]) chownSync(dir, user.uid, user.gid);
  await run(join(bin, "initdb"), ["-D", data, "-U", USER, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], { ...user });
  const port = await freePort();
  const settings = [...SERVER_SETTINGS, `port=${port}`, `unix_socket_directories=${socketDir}`, `fsync=${options.fsync ? "on" : "off"}`];
  let server: ChildProcess | undefined;

  const start = async () => {
    const log = openSync(join(root, "server.log"), "a");
    const child = spawn(join(bin, "postgres"), ["-D", data, ...settings.flatMap((s) => ["-c", s])], { ...user, stdio: ["ignore", log, log] });
    closeSync(log);
    child.unref();
    server = child;
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited at start; see ${root}/server.log`);
      const ready = await run(join(bin, "pg_isready"), ["-q", "-h", "127.0.0.1", "-p", String(port)]).then(() => true, () => false);
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`postgres not ready after ${START_TIMEOUT_MS} ms; see ${root}/server.log`);
      await sleep(50);
    }
  };
  const end = async (how: NodeJS.Signals) => {
    const child = server;
    server = undefined;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    child.ref(); // unref'd while running; waiting for its exit must keep this process up
    const exited = new Promise((resolve) => child.once("exit", resolve));
    // SIGKILL reaches only the postmaster: its backends are killed with it, as in a machine's crash.
    const backends = how === "SIGKILL" ? childrenOf(child.pid) : [];
    signal(child.pid, how);
    for (const pid of backends) signal(pid, how);
    await exited;
  };
  const killNow = () => {
    if (server?.pid) for (const pid of [server.pid, ...childrenOf(server.pid)]) signal(pid, "SIGKILL");
  };
  // Should the test process end without afterAll, the server must not outlive it.
  process.once("exit", killNow);
  await start();

  const url = (database: string) => `postgres://${USER}@127.0.0.1:${port}/${database}`;
  let databases = 0;
  return {
    url,
    async createDatabase() {
      const name = `test_${++databases}`;
      // A connection per call: a kill() in between would have broken a kept one.
      const admin = new pg.Client({ connectionString: url("postgres") });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    async kill() {
      await end("SIGKILL");
    },
    async restart() {
      await start();
    },
    async stop() {
      process.off("exit", killNow);
      await end("SIGINT"); // fast shutdown
      rmSync(root, { recursive: true, force: true });
    },
  };
}
