// The CLI's HTTP client for a server's admin API (`--remote URL`, the token from VANE_ADMIN_TOKEN):
// JSON in and out; a refusal comes back as the AdminRefusal it was on the server, so verbs print
// it as they print their own; a refused token, an unreachable server or a server without an admin
// API is one line, never a stack.
import { AdminRefusal, type RefusalCode } from "../../server/admin/refusal.js";
import { CliError } from "../args.js";

interface ErrorAnswer {
  readonly error?: { readonly code?: string; readonly message?: string; readonly problems?: AdminRefusal["problems"] };
}

export class AdminClient {
  private readonly base: URL;

  constructor(
    remote: string,
    private readonly token: string,
  ) {
    let url: URL;
    try {
      url = new URL(remote);
    } catch {
      throw new CliError(`--remote must be the server's URL, like https://vane.example.com, got "${remote.slice(0, 100)}"`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new CliError(`--remote must be an http:// or https:// URL, got ${url.protocol}//…`);
    // A server behind a path prefix keeps it: https://host/vane → https://host/vane/admin/v1/.
    this.base = new URL("admin/v1/", url.href.endsWith("/") ? url : `${url.href}/`);
  }

  /** The server's URL as the user gave it, for messages. */
  get origin(): string {
    return new URL("../../", this.base).href.replace(/\/$/, "");
  }

  /** GET or POST a path under /admin/v1/; the answer's JSON, or the refusal thrown. */
  async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body);
    const answer = await this.json(response);
    if (response.ok) return answer as T;
    throw this.refusal(response.status, answer as ErrorAnswer);
  }

  /** A GET whose 404 means "there is none". */
  async find<T>(path: string): Promise<T | undefined> {
    try {
      return await this.call<T>("GET", path);
    } catch (error) {
      if (error instanceof AdminRefusal && error.code === "NOT_FOUND") return undefined;
      throw error;
    }
  }

  private async send(method: string, path: string, body: unknown): Promise<Response> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    try {
      return await fetch(new URL(path, this.base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(`cannot reach the admin API at ${this.origin}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
  }

  private async json(response: Response): Promise<unknown> {
    const text = await response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CliError(`${this.origin} answered ${response.status} with something other than JSON: is it a Vane server?`);
    }
  }

  private refusal(status: number, answer: ErrorAnswer): Error {
    const message = answer.error?.message ?? `status ${status}`;
    if (status === 401) return new CliError(`the admin API at ${this.origin} refused the token in VANE_ADMIN_TOKEN: ${message}`);
    // The app's own 404 for a path it does not serve: the admin API is off.
    if (status === 404 && message.startsWith("Route not found")) {
      return new CliError(`${this.origin} has no admin API: start the server with --admin-token (or VANE_ADMIN_TOKEN)`);
    }
    if (status === 400 || status === 404) return new AdminRefusal(answer.error?.code as RefusalCode, message, answer.error?.problems ?? []);
    return new CliError(`the admin API at ${this.origin} failed (${status}): ${message}`);
  }
}
