// `node bin/vane.js serve` (the built dist/, as a user runs it) in a child process, ready once its
// banner is complete, with the URL and, on a first run, the demo keys it printed.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { afterEach } from "vitest";

const ROOT = new URL("../../", import.meta.url);
const READY = "Stop with Ctrl-C.";

export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly url: string;
  /** The demo keys a first run prints; "" on a later run. */
  readonly pk: string;
  readonly sk: string;
  /** Where GET /metrics answers, when the banner names it ("" otherwise). */
  readonly metricsUrl: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it has written so far (request logs with --log-level info, restarts on stderr). */
  stdout(): string;
  stderr(): string;
}

const started: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** `wrapper` runs the server, e.g. ["prlimit", "--nofile=256:256"]. */
export async function serveProcess(dataDir: string, args: readonly string[] = [], wrapper: readonly string[] = []): Promise<ServeProcess> {
  const command = [...wrapper, process.execPath, "bin/vane.js", "serve", "--port", "0", "--data", dataDir, ...args];
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT });
  started.push(child);
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("exit", (code, signal) => done({ code, signal })));
  await new Promise<void>((ready, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(READY)) ready();
    });
    void exited.then(({ code }) => fail(new Error(`vane serve exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
  const match = (pattern: RegExp) => pattern.exec(out)?.[1] ?? "";
  return {
    child,
    exited,
    url: match(/is listening on (\S+)/),
    pk: match(/publishable key\s+(\S+)/),
    sk: match(/server-side key\s+(\S+)/),
    metricsUrl: match(/Metrics \(Prometheus\): (\S+)/),
    stdout: () => out,
    stderr: () => err,
  };
}
