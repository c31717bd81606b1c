// `vane <verb>`: operating the service from a checkout (decisions.md §8).
import { parseArgs } from "node:util";
import { startNodeServer } from "../server/node.js";

const USAGE = `Usage: vane <verb> [options]

Verbs:
  serve     run the HTTP API

Run "vane <verb> --help" for a verb's options.`;

const SERVE_USAGE = `Usage: vane serve [--port 8787] [--host 127.0.0.1]

Runs the HTTP API.
  --port N     port to listen on (default 8787; 0 picks a free one)
  --host H     address to bind (default 127.0.0.1)`;

async function serve(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: "string", default: "8787" }, host: { type: "string", default: "127.0.0.1" }, help: { type: "boolean" } },
  });
  if (values.help) return print(SERVE_USAGE, 0);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) return print(`vane serve: --port must be an integer from 0 to 65535, got ${values.port}`, 2);
  const server = await startNodeServer({ port, host: values.host });
  console.log(`Vane is listening on ${server.url}\n  curl ${server.url}/health`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  return -1; // keeps running
}

function print(text: string, code: number): number {
  (code === 0 ? console.log : console.error)(text);
  return code;
}

export async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  try {
    if (verb === "serve") return await serve(rest);
    if (verb === undefined || verb === "--help" || verb === "help") return print(USAGE, verb === undefined ? 2 : 0);
    return print(`vane: unknown verb "${verb}"\n\n${USAGE}`, 2);
  } catch (error) {
    return print(`vane ${verb}: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
}
