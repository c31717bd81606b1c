// `vane <verb>`: operating the service from a checkout (decisions.md §8). main finds the verb,
// prints help, and turns every failure into a message and an exit code — never a stack trace:
// 0 done, 1 refused or failed, 2 wrong usage.
import { packageVersion } from "../server/node.js";
import { UsageError, wantsHelp } from "./args.js";
import { bundlesGroup } from "./bundles.js";
import { edgeGroup } from "./edge.js";
import { eventsGroup } from "./events.js";
import { flagsGroup, rolloutVerb } from "./flags.js";
import { GLOBAL_OPTIONS, leadingOptions } from "./global-options.js";
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
  "--data DIR and --store URL may also come before the verb: vane --data DIR keys list.",
  'Run "vane <verb> --help" for a verb\'s options; "vane --version" prints the version.',
].join("\n");

function groupUsage(group: VerbGroup): string {
  return [`Usage: vane ${group.name} <${group.verbs.map((v) => v.name).join("|")}> [options]`, "", ...listing(group.verbs), "", `Run "vane ${group.name} <verb> --help" for its options.`].join("\n");
}

export async function main(argv: readonly string[], io: Io = consoleIo): Promise<number> {
  const leading = leadingOptions(argv);
  if ("problem" in leading) return print(io.err, `vane: ${leading.problem}\n\n${USAGE}`, 2);
  const { options } = leading;
  const [name, ...rest] = leading.rest;
  if (name === undefined) return print(io.err, USAGE, 2);
  if (name === "--version" || name === "-v") return print(io.out, packageVersion(), 0);
  if (HELP_WORDS.includes(name)) {
    const about = rest[0] === undefined ? undefined : ENTRIES.find((e) => e.name === rest[0]);
    return print(io.out, about === undefined ? USAGE : "verbs" in about ? groupUsage(about) : about.usage, 0);
  }
  const entry = ENTRIES.find((e) => e.name === name);
  if (entry === undefined && name.startsWith("-")) return print(io.err, `vane: ${name} goes after the verb (only ${GLOBAL_OPTIONS.slice(0, -1).join(", ")} and ${GLOBAL_OPTIONS.at(-1)} may come before it)\n\n${USAGE}`, 2);
  if (entry === undefined) return print(io.err, `vane: unknown verb "${name}"\n\n${USAGE}`, 2);
  if (!("verbs" in entry)) return runVerb(entry, [...options, ...rest], { io, label: `vane ${entry.name}` });
  const [sub, ...subArgs] = rest;
  if (sub === undefined) return print(io.err, `vane ${entry.name}: which one?\n\n${groupUsage(entry)}`, 2);
  if (HELP_WORDS.includes(sub)) return print(io.out, groupUsage(entry), 0);
  const verb = entry.verbs.find((v) => v.name === sub);
  if (verb === undefined) return print(io.err, `vane ${entry.name}: unknown verb "${sub}"\n\n${groupUsage(entry)}`, 2);
  return runVerb(verb, [...options, ...subArgs], { io, label: `vane ${entry.name} ${verb.name}` });
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
