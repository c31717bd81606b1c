#!/usr/bin/env -S MALLOC_ARENA_MAX=2 NODE_OPTIONS="--max-semi-space-size=8 ${NODE_OPTIONS}" node
// The event loop's semi-spaces at 8 MiB, not V8's 16: ~15 MiB less resident at the end of a load,
// at no instruction cost counted (4 MiB took twice that off, for +5 % in V8's helper threads;
// docs/performance.md, section 6, "Session 13"). V8 reads the flag only as the process starts
// (v8.setFlagsFromString later leaves the new space as it is), so it is set here, in the line
// that starts node: ahead of the user's own NODE_OPTIONS, which come later and so win.
// Two malloc arenas, not glibc's eight a core: −9 to −18 MiB at the end of a load and 30 s after
// (section 6, "Session 18"); glibc reads the variable once, before the first malloc, so only the
// line that starts the process can set it (this one overrides a user's own; `node bin/vane.js`
// runs without it).
import { main } from "../dist/cli/main.js";

const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
