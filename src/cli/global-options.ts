// Where the store is may be said before the verb too: `vane --data DIR bundles validate FILE`
// runs as `vane bundles validate --data DIR FILE`. Only the options every verb takes may come
// first; an option given again after the verb wins (parseArgs keeps the last).

/** Every verb's store options (args.ts STORE_OPTIONS), as they may come before the verb. */
export const GLOBAL_OPTIONS = ["--data", "--store", "--remote"] as const;

export type Leading = { readonly options: string[]; readonly rest: string[] } | { readonly problem: string };

/** Splits the store options in front of the verb (`--data DIR` or `--data=DIR`) from the rest. */
export function leadingOptions(argv: readonly string[]): Leading {
  const options: string[] = [];
  let i = 0;
  for (let arg = argv[0]; arg !== undefined && isGlobal(arg); arg = argv[i]) {
    if (arg.includes("=")) {
      options.push(arg);
      i += 1;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith("-")) return { problem: `${arg} needs a value` };
    options.push(arg, value);
    i += 2;
  }
  return { options, rest: argv.slice(i) };
}

function isGlobal(arg: string): boolean {
  return GLOBAL_OPTIONS.some((name) => arg === name || arg.startsWith(`${name}=`));
}
