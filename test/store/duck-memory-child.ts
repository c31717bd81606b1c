// A process for duck-memory.test.ts: opens DuckDB as the Parquet copy does (one thread, its memory
// bounded, its allocator flushing past 16 MiB), fills and drops a table of ~100 MiB, and then,
// DuckDB left open and idle, prints its anonymous resident MiB every half second for 10 s (the
// first line: while the table is held).
import { readFileSync } from "node:fs";
import { openDuck } from "../../src/store/columnar/duck.js";

const anonMiB = () => Number(/^RssAnon:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;
const duck = await openDuck({ threads: 1, memoryBytes: 512 * 1024 * 1024, flushBytes: 16 * 1024 * 1024 });
await duck.connection.run("CREATE TABLE held AS SELECT range AS seq, repeat(md5(range::VARCHAR), 8) AS body FROM range(400000)");
process.stdout.write(`${anonMiB()}\n`);
await duck.connection.run("DROP TABLE held");
for (let i = 0; i < 20; i++) {
  await new Promise((resolve) => setTimeout(resolve, 500));
  process.stdout.write(`${anonMiB()}\n`);
}
duck.close();
