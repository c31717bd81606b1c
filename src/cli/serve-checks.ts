// What `vane serve` checks around its start: the two ports it is given, and a port someone else
// holds, said in words (which option to change) rather than as a bare EADDRINUSE.
import type { MetricsExposure } from "../server/node.js";
import { CliError, UsageError } from "./args.js";
import { errorMessage } from "./output.js";

/** --metrics PORT needs a port of its own: the API's would be taken twice. */
export function checkPorts(port: number, metrics: MetricsExposure, usage: string): void {
  if (typeof metrics === "object" && metrics.port === port && port !== 0) {
    throw new UsageError(`--metrics ${port} is the API's --port too: give /metrics a port of its own, or --metrics on to serve it on the API's port`, usage);
  }
}

/** A listen error with the option to change; any other error as it is. */
export function listenError(error: unknown, at: { host: string; port: number; metrics: MetricsExposure }): unknown {
  const message = errorMessage(error);
  if ((error as { code?: unknown }).code !== "EADDRINUSE" && !message.includes("EADDRINUSE")) return error;
  const taken = Number((error as { port?: unknown }).port ?? /:(\d+)\s*$/.exec(message)?.[1]);
  const option = typeof at.metrics === "object" && taken === at.metrics.port ? "--metrics" : "--port";
  const port = Number.isInteger(taken) ? taken : at.port;
  return new CliError(`port ${port} on ${at.host} is in use by another process (EADDRINUSE): stop it, or pass ${option} with another port (0 picks a free one)`);
}
