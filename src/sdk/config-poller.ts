// The bundle a client resolves from: GET /v1/config/:projectId, then polled with If-None-Match at
// the answer's Cache-Control max-age (a 304 keeps the bundle). When the service answers 429 or
// 5xx, or cannot be reached, the next poll waits for Retry-After (or a growing backoff) and the
// last good bundle keeps serving: a poll failure never takes assignments away. With
// `changes: "stream"` the service's change stream also asks for a poll the moment a new version
// is published (the polls go on, less urgent, as a safety net).
import { type CompiledBundle, compileBundle } from "../bundle/compile.js";
import type { Bundle } from "../bundle/types.js";
import type { BucketEngine } from "../engine/bucket-engine.js";
import { listenForChanges } from "./change-stream.js";
import { type Service, authorization, endpoint, failure, isTransient } from "./http.js";

/** The contract's max-age, used when an answer carries none. */
const DEFAULT_MAX_AGE_MS = 60_000;
/** A max-age of 0 would poll in a loop. */
const MIN_POLL_MS = 1000;
/** Unreachable service without Retry-After: 1 s, doubling, capped at the max-age. */
const FIRST_BACKOFF_MS = 1000;

export interface ConfigSource {
  readonly service: Service;
  readonly projectId: string;
  readonly env: string;
  readonly engine: BucketEngine;
  readonly onError: (error: unknown) => void;
  /** Called when a fetched bundle of a new version replaces the one served. */
  readonly onBundle?: (version: string) => void;
  /** "stream": listen to the change stream too; "poll" (default): polls only. */
  readonly changes?: "poll" | "stream";
}

interface PollOutcome {
  readonly nextPollMs: number;
  readonly error?: unknown;
}

export class ConfigPoller {
  compiled: CompiledBundle | undefined;
  private etag: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private failures = 0;
  private stopListening: (() => void) | undefined;

  /** A bootstrap bundle serves at once; its ETag is `"<version>"`, the server's (docs/api.md). */
  constructor(
    private readonly source: ConfigSource,
    bootstrap?: Bundle,
  ) {
    if (bootstrap !== undefined) {
      this.compiled = compileBundle(bootstrap, source.engine);
      this.etag = `"${bootstrap.version}"`;
    }
  }

  /** One request now; the error when it brought no usable bundle. Polling starts after it. */
  async fetchNow(): Promise<unknown> {
    const outcome = await this.poll();
    this.schedule(outcome.nextPollMs);
    return outcome.error;
  }

  /** Polls from now on, the first time after `delayMs`. */
  schedule(delayMs: number = DEFAULT_MAX_AGE_MS): void {
    if (this.stopped) return;
    if (this.source.changes === "stream") this.stopListening ??= this.listen();
    this.timer = setTimeout(() => void this.tick(), delayMs);
    // Node: polling alone does not keep a process alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.stopListening?.();
  }

  /** A change whose version is not the one held brings the poll forward to now. */
  private listen(): () => void {
    const { projectId, env } = this.source;
    const path = `/ofrep/v1/changes/${encodeURIComponent(projectId)}?env=${encodeURIComponent(env)}`;
    const changed = (etag: string | undefined) => {
      if (this.stopped || (etag !== undefined && etag === this.etag)) return;
      clearTimeout(this.timer);
      void this.tick();
    };
    return listenForChanges(this.source.service, path, changed, () => this.compiled?.version);
  }

  private async tick(): Promise<void> {
    const outcome = await this.poll();
    if (outcome.error !== undefined) this.source.onError(outcome.error);
    this.schedule(outcome.nextPollMs);
  }

  private async poll(): Promise<PollOutcome> {
    const { service, projectId, env } = this.source;
    const headers = authorization(service);
    if (this.etag !== undefined) headers["If-None-Match"] = this.etag;
    const url = endpoint(service, `/v1/config/${encodeURIComponent(projectId)}?env=${encodeURIComponent(env)}`);
    let response: Response;
    try {
      response = await service.fetch(url, { headers });
    } catch (error) {
      return this.backoff(error, undefined);
    }
    if (response.status === 304) return this.fresh(response);
    if (!response.ok) {
      const error = await failure(response);
      return isTransient(response.status) ? this.backoff(error, error.retryAfterMs) : { nextPollMs: DEFAULT_MAX_AGE_MS, error };
    }
    try {
      this.adopt((await response.json()) as Bundle, response.headers.get("ETag") ?? undefined);
    } catch (error) {
      // A bundle that does not parse or compile is refused; the one before it keeps serving.
      return { nextPollMs: maxAgeMs(response), error };
    }
    return this.fresh(response);
  }

  private adopt(bundle: Bundle, etag: string | undefined): void {
    const changed = this.compiled !== undefined && bundle?.version !== this.compiled.version;
    if (bundle?.version !== this.compiled?.version) this.compiled = compileBundle(bundle, this.source.engine);
    this.etag = etag;
    if (changed) this.source.onBundle?.(this.compiled!.version);
  }

  private fresh(response: Response): PollOutcome {
    this.failures = 0;
    return { nextPollMs: maxAgeMs(response) };
  }

  private backoff(error: unknown, retryAfter: number | undefined): PollOutcome {
    const grown = Math.min(FIRST_BACKOFF_MS * 2 ** this.failures++, DEFAULT_MAX_AGE_MS);
    return { nextPollMs: retryAfter ?? grown, error };
  }
}

function maxAgeMs(response: Response): number {
  const match = /max-age=(\d+)/.exec(response.headers.get("Cache-Control") ?? "");
  return match ? Math.max(MIN_POLL_MS, Number(match[1]) * 1000) : DEFAULT_MAX_AGE_MS;
}
