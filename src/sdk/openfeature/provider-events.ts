// The providers' events (OpenFeature's Provider.events): the SDK the provider is set on subscribes
// here and hands each event to the app's handlers (OpenFeature.addHandler, client.addHandler). Our
// own few lines rather than either SDK's emitter, so the web bundle carries neither SDK: the app
// has its own.
import type { AnyProviderEvent, EventContext, EventDetails, EventHandler, Logger, ProviderEventEmitter } from "@openfeature/core";

export class ProviderEvents implements ProviderEventEmitter<AnyProviderEvent> {
  private readonly handlers = new Map<AnyProviderEvent, EventHandler[]>();
  private logger: Logger | undefined;

  emit(eventType: AnyProviderEvent, context?: EventContext): void {
    for (const handler of this.getHandlers(eventType)) {
      try {
        // The SDK's own handlers, which add the provider's and the domain's names.
        void Promise.resolve(handler(context as EventDetails)).catch((error: unknown) => this.logger?.error("vane: a provider event handler failed:", error));
      } catch (error) {
        this.logger?.error("vane: a provider event handler failed:", error);
      }
    }
  }

  addHandler(eventType: AnyProviderEvent, handler: EventHandler): void {
    this.handlers.set(eventType, [...this.getHandlers(eventType), handler]);
  }

  removeHandler(eventType: AnyProviderEvent, handler: EventHandler): void {
    this.handlers.set(eventType, this.getHandlers(eventType).filter((h) => h !== handler));
  }

  removeAllHandlers(eventType?: AnyProviderEvent): void {
    if (eventType === undefined) this.handlers.clear();
    else this.handlers.delete(eventType);
  }

  getHandlers(eventType: AnyProviderEvent): EventHandler[] {
    return this.handlers.get(eventType) ?? [];
  }

  setLogger(logger: Logger): this {
    this.logger = logger;
    return this;
  }
}
