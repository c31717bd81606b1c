// `vane <verb>`: operating the service from a checkout (decisions.md §8). main finds the verb,
// prints help, and turns every failure into a message and an exit code — never a stack trace:
// 0 done, 1 refused or failed, 2 wrong usage.
import { UsageError, wantsHelp } from "./args.js";
import { GLOBAL_OPTIONS, leadingOptions } from "./global-options.js";
import { type Io, consoleIo, errorMessage } from "./output.js";
import type { Verb, VerbGroup } from "./verb.js";

type Entry = Verb | VerbGroup;

/**
 * Each verb's module, loaded only when that verb runs (or a listing needs them all): a command
 * that reads events would otherwise load the server's modules too, 0.2 s of CPU at its start.
 */
const ENTRIES: readonly { readonly name: string; load(): Promise<Entry> }[] = [
  { name: "serve", load: async () => (await import("./serve.js")).serveVerb },
  { name: "init", load: async () => (await import("./init.js")).initVerb },
  { name: "import", load: async () => (await import("./import.js")).importVerb },
  { name: "keys", load: async () => (await import("./keys.js")).keysGroup },
  { name: "bundles", load: async () => (await import("./bundles.js")).bundlesGroup },
  { name: "flags", load: async () => (await import("./flags.js")).flagsGroup },
  { name: "rollout", load: async () => (await import("./flags.js")).rolloutVerb },
  { name: "events", load: async () => (await import("./events.js")).eventsGroup },
  { name: "report", load: async () => (await import("./report.js")).reportVerb },
  { name: "results", load: async () => (await import("./results.js")).resultsVerb },
  { name: "edge", load: async () => (await import("./edge.js")).edgeGroup },
];

const HELP_WORDS = ["--help", "-h", "help"];

/** The entry named `name`, loaded; undefined for no such verb. */
export async function loadEntry(name: string): Promise<Entry | undefined> {
  return ENTRIES.find((e) => e.name === name)?.load();
}

function listing(entries: readonly { name: string; summary: string }[]): string[] {
  const width = Math.max(...entries.map((e) => e.name.length));
  return entries.map((e) => `  ${e.name.padEnd(width)}  ${e.summary}`);
}

async function usage(): Promise<string> {
  const entries = await Promise.all(ENTRIES.map((e) => e.load()));
  return [
    "Usage: vane <verb> [options]",
    "",
    "Verbs:",
    ...listing(entries.map((e) => ({ name: "verbs" in e ? `${e.name} ${e.verbs.map((v) => v.name).join("|")}` : e.name, summary: e.summary }))),
    "",
    "--data DIR and --store URL may also come before the verb: vane --data DIR keys list.",
    'Run "vane <verb> --help" for a verb\'s options; "vane --version" prints the version.',
  ].join("\n");
}

function groupUsage(group: VerbGroup): string {
  return [`Usage: vane ${group.name} <${group.verbs.map((v) => v.name).join("|")}> [options]`, "", ...listing(group.verbs), "", `Run "vane ${group.name} <verb> --help" for its options.`].join("\n");
}

export async function main(argv: readonly string[], io: Io = consoleIo): Promise<number> {
  const leading = leadingOptions(argv);
  if ("problem" in leading) return print(io.err, `vane: ${leading.problem}\n\n${await usage()}`, 2);
  const { options } = leading;
  const [name, ...rest] = leading.rest;
  if (name === undefined) return print(io.err, await usage(), 2);
  if (name === "--version" || name === "-v") return print(io.out, (await import("../server/node.js")).packageVersion(), 0);
  if (HELP_WORDS.includes(name)) {
    const about = rest[0] === undefined ? undefined : await loadEntry(rest[0]);
    return print(io.out, about === undefined ? await usage() : "verbs" in about ? groupUsage(about) : about.usage, 0);
  }
  const entry = await loadEntry(name);
  if (entry === undefined && name.startsWith("-")) return print(io.err, `vane: ${name} goes after the verb (only ${GLOBAL_OPTIONS.slice(0, -1).join(", ")} and ${GLOBAL_OPTIONS.at(-1)} may come before it)\n\n${await usage()}`, 2);
  if (entry === undefined) return print(io.err, `vane: unknown verb "${name}"\n\n${await usage()}`, 2);
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
