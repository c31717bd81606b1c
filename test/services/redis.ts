// A private Redis for the tests (issue 16, item 7): Debian's redis-server on a free 127.0.0.1 port,
// its folder in a temp dir, nothing saved. kill() and restart() (same port, so the servers'
// clients reconnect by themselves) and pause()/resume() (answers nothing, as an overloaded Redis)
// make outages. Whoever starts one stops it in afterAll; an exit hook kills any left behind.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WAIT_MS } from "../wait.js";

const REDIS_SERVER = "/usr/bin/redis-server";
const READY_TIMEOUT_MS = WAIT_MS;

export interface RedisService {
  readonly url: string;
  readonly port: number;
  /** SIGKILL, as a crash: the clients see their connection drop. */
  kill(): Promise<void>;
  /** A fresh redis-server on the same port (holding nothing, as after a crash). */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open and nothing answers, until resume(). */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => running.forEach((child) => child.kill("SIGKILL")));

export async function startRedis(): Promise<RedisService> {
  if (!existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} not found: apt-get install redis-server (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), "vane-redis-"));
  const port = await freePort();
  let child = await launch(port, dir);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async kill() {
      await end(child, "SIGKILL");
    },
    async restart() {
      await end(child, "SIGKILL");
      child = await launch(port, dir);
    },
    pause: () => child.kill("SIGSTOP"),
    resume: () => child.kill("SIGCONT"),
    async stop() {
      child.kill("SIGCONT");
      await end(child, "SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function launch(port: number, dir: string): Promise<ChildProcess> {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no"];
  const child = spawn(REDIS_SERVER, args, { stdio: ["ignore", "ignore", "pipe"] });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await pong(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`redis-server on port ${port} did not answer PING`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}

function end(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once("exit", () => done());
    child.kill(signal);
  });
}

/** One PING over a bare socket: true on +PONG. */
function pong(port: number): Promise<boolean> {
  return new Promise((answer) => {
    const socket = connect(port, "127.0.0.1");
    socket.setTimeout(500);
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      answer(data.toString().startsWith("+PONG"));
      socket.destroy();
    });
    socket.once("error", () => answer(false));
    socket.once("timeout", () => {
      answer(false);
      socket.destroy();
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
