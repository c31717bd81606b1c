// Preloaded (--require) into `vane serve` by the benches that set the Parquet copy's child process
// apart from what it ships with: VANE_PROBE_COPY_FLAGS (node flags after the copy's own, so they
// win) and VANE_PROBE_COPY_ENV (a JSON object of environment variables) go to the copy only, not
// the server. bench:instructions gives the copy the V8 settings its counted server has (servers.ts,
// realPaceHeap); bench/memory-account.ts measures the copy's levers with them. Measurement only.
const childProcess = require("node:child_process");

const preloads = new Set();
let patched = false;

/** Every fork from now on also preloads `preload` (when given) and takes the probe's flags and environment. */
function forkWithProbe(preload) {
  if (preload !== undefined) preloads.add(preload);
  if (patched) return;
  patched = true;
  const fork = childProcess.fork;
  const extraFlags = (process.env.VANE_PROBE_COPY_FLAGS ?? "").split(" ").filter((f) => f !== "");
  const extraEnv = JSON.parse(process.env.VANE_PROBE_COPY_ENV ?? "{}");
  childProcess.fork = function (modulePath, args, options = {}) {
    const required = [...preloads].flatMap((file) => ["--require", file]);
    const execArgv = [...(options.execArgv ?? process.execArgv), ...required, ...extraFlags];
    return fork.call(this, modulePath, args, { ...options, execArgv, env: { ...(options.env ?? process.env), ...extraEnv } });
  };
  require("node:module").syncBuiltinESMExports(); // `import { fork }` reads the patched one
}

// In the server only: the copy is a fork of it, and forks nothing.
if (process.send === undefined) forkWithProbe();

module.exports = { forkWithProbe };
