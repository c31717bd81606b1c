// bench:instructions reads the server's callgrind files and, since the Parquet copy is a child
// process, its child's: which process wrote a file, and what a child's thread counts as.
import { describe, expect, it } from "vitest";
import { CHILD_THREADS, THREADS, threadKind } from "../../bench/instructions/breakdown.js";
import { pidOfFile } from "../../bench/instructions/servers.js";

const evidence = { platform: false, worker: false, uvPool: false, duckdb: false, sqlite: false };

describe("callgrind files of a process tree", () => {
  it("names the pid of a dump's file and of one written at a process's exit", () => {
    expect(pidOfFile("/tmp/x/callgrind.out.4066.3-02")).toBe(4066);
    expect(pidOfFile("callgrind.out.4077-05")).toBe(4077);
    expect(Number.isNaN(pidOfFile("callgrind.out.4077"))).toBe(true); // valgrind's own summary, not a thread's part
  });

  it("counts a child's threads, its event loop too, as the copy's process, apart from the server's", () => {
    expect(threadKind(CHILD_THREADS + 1, evidence)).toBe(THREADS.copyProcess);
    expect(threadKind(CHILD_THREADS + 5, { ...evidence, platform: true })).toBe(THREADS.copyProcess);
    expect(threadKind(1, evidence)).toBe(THREADS.main);
  });
});
