// Preloaded (--require) into the servers bench:instructions counts (not the guard's): their HTTP
// servers keep an idle connection open for ten minutes, where Node's default closes it after 5 s.
// The bench waits for quiet between the warm-up and the count; with the default, the warm-up's
// connections closed during that wait and the count opened new ones, and Node's socket, timer and
// stream functions, meeting maps they had not seen, were optimized again inside the counted window
// (docs/performance.md, "what keeps the windows compiling"). Measurement only.
const http = require("node:http");

const IDLE_KEPT_MS = 600_000;
const createServer = http.createServer;
http.createServer = function (...args) {
  const server = createServer.apply(this, args);
  server.keepAliveTimeout = IDLE_KEPT_MS;
  return server;
};
require("node:module").syncBuiltinESMExports(); // `import { createServer }` reads the patched one
