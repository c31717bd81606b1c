#!/usr/bin/env -S NODE_OPTIONS="--max-semi-space-size=8 ${NODE_OPTIONS}" node
// The event loop's semi-spaces at 8 MiB, not V8's 16: ~15 MiB less resident at the end of a load,
// at no instruction cost counted (4 MiB took twice that off, for +5 % in V8's helper threads;
// docs/performance.md, section 6, "Session 13"). V8 reads the flag only as the process starts
// (v8.setFlagsFromString later leaves the new space as it is), so it is set here, in the line
// that starts node: ahead of the user's own NODE_OPTIONS, which come later and so win.
import { main } from "../dist/cli/main.js";

const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
