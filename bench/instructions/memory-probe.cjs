// Preloaded (--require) by `bench:memory-account` into `vane serve` and each of its worker threads:
// every second one line with this isolate's heap and external memory, so that the bench can say
// what each thread held at a given moment (an ended thread's last line stays). Measurement only.
const { writeSync } = require("node:fs");
const { createRequire } = require("node:module");
const v8 = require("node:v8");
const { isMainThread, threadId } = require("node:worker_threads");

// VANE_PROBE_SQLITE_CACHE_KIB: every SQLite connection's page cache bounded to that many KiB
// (better-sqlite3 compiles in 16,000 KiB a connection), to measure what the caches hold. Each of
// the server's connections sets a pragma right after it opens (journal_mode, synchronous): the
// bound goes in before its first one.
const cacheKiB = process.env.VANE_PROBE_SQLITE_CACHE_KIB;
if (cacheKiB !== undefined) {
  const { prototype } = require(createRequire(`${process.cwd()}/`).resolve("better-sqlite3"));
  const pragma = prototype.pragma;
  const bounded = new WeakSet();
  prototype.pragma = function (...args) {
    if (!bounded.has(this)) {
      bounded.add(this);
      pragma.call(this, `cache_size = -${Number(cacheKiB)}`);
    }
    return pragma.apply(this, args);
  };
}

// In the server, every fork (the Parquet copy's child process) gets this probe too, and, for the
// variants that measure the copy's levers, VANE_PROBE_COPY_FLAGS (node flags after the copy's own,
// so they win) and VANE_PROBE_COPY_ENV (a JSON object of environment variables): the copy only,
// not the server.
if (process.send === undefined) {
  const childProcess = require("node:child_process");
  const fork = childProcess.fork;
  const extraFlags = (process.env.VANE_PROBE_COPY_FLAGS ?? "").split(" ").filter((f) => f !== "");
  const extraEnv = JSON.parse(process.env.VANE_PROBE_COPY_ENV ?? "{}");
  childProcess.fork = function (modulePath, args, options = {}) {
    const execArgv = [...(options.execArgv ?? process.execArgv), "--require", __filename, ...extraFlags];
    return fork.call(this, modulePath, args, { ...options, execArgv, env: { ...(options.env ?? process.env), ...extraEnv } });
  };
  require("node:module").syncBuiltinESMExports(); // `import { fork }` reads the patched one
}

const MiB = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
setInterval(() => {
  const h = v8.getHeapStatistics();
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, MiB(s.physical_space_size)]));
  const line = { pid: process.pid, copy: process.send !== undefined, thread: isMainThread ? "main" : `worker ${threadId}`, spaces, rss: MiB(m.rss), physical: MiB(h.total_physical_size), used: MiB(h.used_heap_size), malloced: MiB(h.malloced_memory), external: MiB(m.external), arrayBuffers: MiB(m.arrayBuffers), at: Date.now() };
  // writeSync: a worker's process.stdout goes through the event loop, which a load keeps busy.
  writeSync(1, `MEMPROBE ${JSON.stringify(line)}\n`);
}, 1000).unref();
