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

// VANE_PROBE_DUCK_SETTINGS (a JSON object, set for the copy by bench/memory-account.ts's variants):
// DuckDB settings over those the copy opens its DuckDB with (duck-writer.ts's memory_limit and
// flush thresholds), to measure a constant's value without a build.
const duckSettings = JSON.parse(process.env.VANE_PROBE_DUCK_SETTINGS || "{}");
if (Object.keys(duckSettings).length > 0) {
  const { DuckDBInstance } = require(createRequire(`${process.cwd()}/`).resolve("@duckdb/node-api"));
  const create = DuckDBInstance.create;
  DuckDBInstance.create = function (path, options) {
    return create.call(this, path, { ...options, ...duckSettings });
  };
}

// In the server, every fork (the Parquet copy's child process) gets this probe too, and the copy's
// flags and environment of the variants that measure its levers (copy-flags.cjs).
if (process.send === undefined) require("./copy-flags.cjs").forkWithProbe(__filename);

const MiB = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
setInterval(() => {
  const h = v8.getHeapStatistics();
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, MiB(s.physical_space_size)]));
  const line = { pid: process.pid, copy: process.send !== undefined, thread: isMainThread ? "main" : `worker ${threadId}`, spaces, rss: MiB(m.rss), physical: MiB(h.total_physical_size), used: MiB(h.used_heap_size), malloced: MiB(h.malloced_memory), external: MiB(m.external), arrayBuffers: MiB(m.arrayBuffers), at: Date.now() };
  // writeSync: a worker's process.stdout goes through the event loop, which a load keeps busy.
  writeSync(1, `MEMPROBE ${JSON.stringify(line)}\n`);
}, 1000).unref();
