// The client's side of the service's HTTP conventions: where a path lives, the headers every call
// carries, the contract's error object turned into an Error, and how long Retry-After says to wait.

/** A refusal from the service: the status, the contract's error code and message, and Retry-After. */
export class VaneError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    /** From Retry-After, when the answer had one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "VaneError";
  }
}

export interface Service {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetch: typeof fetch;
}

export function endpoint(service: Service, path: string): string {
  return service.baseUrl.replace(/\/+$/, "") + path;
}

export function authorization(service: Service): Record<string, string> {
  return { Authorization: `Bearer ${service.apiKey}` };
}

/** 429 and 5xx: the service asks to come back later; nothing was stored or served. */
export function isTransient(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Retry-After in ms: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get("Retry-After")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The error a non-2xx answer stands for, read from its `{ error: { code, message } }` body when it has one. */
export async function failure(response: Response): Promise<VaneError> {
  let code = `HTTP_${response.status}`;
  let message = `${response.status} ${response.statusText}`.trim();
  try {
    const body = (await response.json()) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") code = body.error.code;
    if (typeof body.error?.message === "string") message = body.error.message;
  } catch {
    // Not the contract's JSON (a proxy's page, an empty body): the status says enough.
  }
  return new VaneError(`${message} (${response.status} ${code})`, response.status, code, retryAfterMs(response));
}
