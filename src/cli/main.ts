// `vane <verb>`: operating the service from a checkout (decisions.md §8). main finds the verb,
// prints help, and turns every failure into a message and an exit code — never a stack trace:
// 0 done, 1 refused or failed, 2 wrong usage.
import { packageVersion } from "../server/node.js";
import { UsageError, wantsHelp } from "./args.js";
import { bundlesGroup } from "./bundles.js";
import { edgeGroup } from "./edge.js";
import { eventsGroup } from "./events.js";
import { flagsGroup, rolloutVerb } from "./flags.js";
import { importVerb } from "./import.js";
import { initVerb } from "./init.js";
import { keysGroup } from "./keys.js";
import { type Io, consoleIo, errorMessage } from "./output.js";
import { reportVerb } from "./report.js";
import { resultsVerb } from "./results.js";
import { serveVerb } from "./serve.js";
import type { Verb, VerbGroup } from "./verb.js";

type Entry = Verb | VerbGroup;

const ENTRIES: readonly Entry[] = [serveVerb, initVerb, importVerb, keysGroup, bundlesGroup, flagsGroup, rolloutVerb, eventsGroup, reportVerb, resultsVerb, edgeGroup];
const HELP_WORDS = ["--help", "-h", "help"];

function listing(entries: readonly { name: string; summary: string }[]): string[] {
  const width = Math.max(...entries.map((e) => e.name.length));
  return entries.map((e) => `  ${e.name.padEnd(width)}  ${e.summary}`);
}

const USAGE = [
  "Usage: vane <verb> [options]",
  "",
  "Verbs:",
  ...listing(ENTRIES.map((e) => ({ name: "verbs" in e ? `${e.name} ${e.verbs.map((v) => v.name).join("|")}` : e.name, summary: e.summary }))),
  "",
  'Run "vane <verb> --help" for a verb\'s options; "vane --version" prints the version.',
].join("\n");

function groupUsage(group: VerbGroup): string {
  return [`Usage: vane ${group.name} <${group.verbs.map((v) => v.name).join("|")}> [options]`, "", ...listing(group.verbs), "", `Run "vane ${group.name} <verb> --help" for its options.`].join("\n");
}

export async function main(argv: readonly string[], io: Io = consoleIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) return print(io.err, USAGE, 2);
  if (name === "--version" || name === "-v") return print(io.out, packageVersion(), 0);
  if (HELP_WORDS.includes(name)) {
    const about = rest[0] === undefined ? undefined : ENTRIES.find((e) => e.name === rest[0]);
    return print(io.out, about === undefined ? USAGE : "verbs" in about ? groupUsage(about) : about.usage, 0);
  }
  const entry = ENTRIES.find((e) => e.name === name);
  if (entry === undefined) return print(io.err, `vane: unknown verb "${name}"\n\n${USAGE}`, 2);
  if (!("verbs" in entry)) return runVerb(entry, rest, { io, label: `vane ${entry.name}` });
  const [sub, ...subArgs] = rest;
  if (sub === undefined) return print(io.err, `vane ${entry.name}: which one?\n\n${groupUsage(entry)}`, 2);
  if (HELP_WORDS.includes(sub)) return print(io.out, groupUsage(entry), 0);
  const verb = entry.verbs.find((v) => v.name === sub);
  if (verb === undefined) return print(io.err, `vane ${entry.name}: unknown verb "${sub}"\n\n${groupUsage(entry)}`, 2);
  return runVerb(verb, subArgs, { io, label: `vane ${entry.name} ${verb.name}` });
}

async function runVerb(verb: Verb, args: readonly string[], how: { io: Io; label: string }): Promise<number> {
  const { io, label } = how;
  if (wantsHelp(args)) return print(io.out, verb.usage, 0);
  try {
    return await verb.run(args, io);
  } catch (error) {
    if (error instanceof UsageError) return print(io.err, `${label}: ${error.message}\n\n${error.usage}`, 2);
    return print(io.err, `${label}: ${errorMessage(error)}`, 1);
  }
}

function print(write: (text: string) => void, text: string, code: number): number {
  write(text);
  return code;
}
