// Argument parsing shared by the verbs: node:util parseArgs in strict mode, its errors turned into
// usage errors (exit 2 with the verb's usage), and checks of option values.
import { type ParseArgsConfig, parseArgs } from "node:util";

/** The command line is wrong: the message and the verb's usage go to stderr, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

/** The request is understood but cannot be done (missing key, refused file): exit code 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliError";
  }
}

export const DEFAULT_DATA_DIR = ".vane";
/** The --data line of a usage, its text starting at `column` like the other options'. */
export function dataHelp(column: number): string {
  return `  ${"--data DIR".padEnd(column - 2)}the data folder (default ${DEFAULT_DATA_DIR})
  ${"--store URL".padEnd(column - 2)}a shared store instead of the folder's SQLite file: postgres://user@host:5432/db
  ${"".padEnd(column - 2)}(default: $VANE_STORE when set)`;
}

/** Where a verb's store is: every verb that touches the store takes both. */
export const STORE_OPTIONS = {
  data: { type: "string", default: DEFAULT_DATA_DIR },
  store: { type: "string" },
} as const;

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface VerbArgs<O extends Options> {
  readonly usage: string;
  readonly options: O;
  /** How many positionals the verb takes, e.g. [1, 1] for exactly one FILE. */
  readonly positionals: readonly [min: number, max: number];
}

/** `--help` anywhere wins, even next to arguments that would not parse. */
export function wantsHelp(args: readonly string[]): boolean {
  return args.includes("--help") || args.includes("-h");
}

/** What parseArgs gives for these options (named, so declarations can be emitted). */
export type ParsedArgs<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>>;

export function parseVerbArgs<O extends Options>(args: readonly string[], spec: VerbArgs<O>): ParsedArgs<O> {
  let parsed: ParsedArgs<O>;
  try {
    parsed = parseArgs({ args: [...args], options: spec.options, strict: true, allowPositionals: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("ERR_PARSE_ARGS")) throw new UsageError(firstSentence((error as Error).message), spec.usage);
    throw error;
  }
  const [min, max] = spec.positionals;
  const count = parsed.positionals.length;
  if (count > max) throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`, spec.usage);
  if (count < min) throw new UsageError("missing argument", spec.usage);
  return parsed;
}

// Node's messages go on to explain `--` for positionals that start with "-"; the first sentence
// says what is wrong.
function firstSentence(message: string): string {
  const end = message.indexOf(". ");
  return end === -1 ? message : message.slice(0, end);
}

/** A string option the verb cannot do without. */
export function required(value: string | undefined, option: string, usage: string): string {
  if (value === undefined || value === "") throw new UsageError(`${option} is required`, usage);
  return value;
}

/** An integer option value in [min, max]. */
export function integerOption(text: string, option: string, range: { min: number; max: number; usage: string }): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isInteger(n) || n < range.min || n > range.max) {
    throw new UsageError(`${option} must be an integer from ${range.min} to ${range.max}, got "${text}"`, range.usage);
  }
  return n;
}
