// Vane's OpenFeature providers: local evaluation with the WebAssembly engine through Vane's
// client (vane/client), for @openfeature/server-sdk (async API, a context per call) and
// @openfeature/web-sdk (sync API, the app's static context). Give either the client options
// (createClient's) or a client already made; the provider closes only a client it made.
// Tracking is fire and forget in OpenFeature, so an event the service refuses (its schema) is
// told through the provider's events: PROVIDER_ERROR naming it, then PROVIDER_READY again, since
// flags still evaluate and the status must not stay ERROR for one bad event.
import type { AnyProviderEvent, ErrorCode, EvaluationContext, JsonValue, Logger, ResolutionDetails, TrackingEventDetails } from "@openfeature/core";
import type { Provider as ServerProvider } from "@openfeature/server-sdk";
import type { Provider as WebProvider } from "@openfeature/web-sdk";
import { createClient } from "../client.js";
import type { ClientOptions, VaneClient } from "../types.js";
import { FlagEvaluator } from "./evaluator.js";
import { ProviderEvents } from "./provider-events.js";

export type VaneProviderOptions = ClientOptions | { readonly client: VaneClient };

const PROVIDER_NAME = "Vane";

/** Creates or adopts the client, and tells `events` of the events it sees refused; what both providers do at initialize and close. */
class ClientHolder {
  client: VaneClient | undefined;
  private readonly owned: boolean;
  private unsubscribe: () => void = () => undefined;

  constructor(
    private readonly options: VaneProviderOptions,
    private readonly events: ProviderEvents,
  ) {
    this.owned = !("client" in options);
    if ("client" in options) this.client = options.client;
  }

  async start(): Promise<void> {
    if (this.client === undefined) this.client = await createClient(this.options as ClientOptions);
    this.unsubscribe = this.client.onEventsRefused((refused) => {
      this.events.emit("PROVIDER_ERROR" as AnyProviderEvent, {
        message: refused.message,
        errorCode: "GENERAL" as ErrorCode,
        metadata: { refusedEvents: refused.refused.map((r) => r.event).join(","), refusedIds: refused.refused.map((r) => r.id).join(",") },
      });
      this.events.emit("PROVIDER_READY" as AnyProviderEvent);
    });
  }

  async close(): Promise<void> {
    this.unsubscribe();
    if (this.owned) await this.client?.close();
  }
}

export class VaneServerProvider implements ServerProvider {
  readonly metadata = { name: PROVIDER_NAME } as const;
  readonly runsOn = "server";
  readonly events = new ProviderEvents();
  private readonly holder: ClientHolder;
  private readonly evaluator: FlagEvaluator;

  constructor(options: VaneProviderOptions) {
    this.holder = new ClientHolder(options, this.events);
    this.evaluator = new FlagEvaluator(() => this.holder.client);
  }

  initialize(): Promise<void> {
    return this.holder.start();
  }

  onClose(): Promise<void> {
    return this.holder.close();
  }

  async resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<boolean>> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "boolean");
  }

  async resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<string>> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "string");
  }

  async resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<number>> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "number");
  }

  async resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext, _logger?: Logger): Promise<ResolutionDetails<T>> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "object");
  }

  track(trackingEventName: string, context: EvaluationContext, details: TrackingEventDetails): void {
    this.evaluator.track(trackingEventName, context, details);
  }
}

export class VaneWebProvider implements WebProvider {
  readonly metadata = { name: PROVIDER_NAME } as const;
  readonly runsOn = "client";
  readonly events = new ProviderEvents();
  private readonly holder: ClientHolder;
  private readonly evaluator: FlagEvaluator;

  constructor(options: VaneProviderOptions) {
    this.holder = new ClientHolder(options, this.events);
    this.evaluator = new FlagEvaluator(() => this.holder.client);
  }

  initialize(): Promise<void> {
    return this.holder.start();
  }

  onClose(): Promise<void> {
    return this.holder.close();
  }

  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): ResolutionDetails<boolean> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "boolean");
  }

  resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): ResolutionDetails<string> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "string");
  }

  resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): ResolutionDetails<number> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "number");
  }

  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): ResolutionDetails<T> {
    return this.evaluator.evaluate(flagKey, defaultValue, context, "object");
  }

  track(trackingEventName: string, context: EvaluationContext, details: TrackingEventDetails): void {
    this.evaluator.track(trackingEventName, context, details);
  }
}
