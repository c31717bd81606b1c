// The stores as the service sees them, observed: every call that fails is counted (store errors
// in /metrics, background work included) and told to `failed` (the server's log, rate-limited:
// store-failure-log.ts), and a call made while a request is traced gets a
// child span. Background work (learner, Parquet catch-up, retention) has no request span and
// makes no spans: it would drown the request traces in a root span every 200 ms.
import { type Context, SpanStatusCode, type Tracer, context, trace } from "@opentelemetry/api";
import type { Stores } from "../../store/types.js";
import type { ServiceMetrics } from "./types.js";

const STORE_NAMES = ["bundles", "keys", "events", "learning", "leases"] as const;

export interface StoreObservers {
  readonly tracer: Tracer;
  readonly metrics?: Pick<ServiceMetrics, "storeError">;
  /** Told of every failed call, after it is counted. */
  readonly failed?: (store: string, operation: string, error: unknown) => void;
}

/** The same stores (and any extra members, like SQLite's close) with each store's methods observed. */
export function observeStores<S extends Stores>(stores: S, observers: StoreObservers): S {
  const observed = new Map<PropertyKey, unknown>();
  for (const name of STORE_NAMES) observed.set(name, observeStore(name, stores[name], observers));
  return new Proxy(stores, {
    get(target, property) {
      if (observed.has(property)) return observed.get(property);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function observeStore<T extends object>(store: string, target: T, observers: StoreObservers): T {
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(self, property) {
      const value: unknown = Reflect.get(self, property, self);
      if (typeof value !== "function") return value;
      let method = methods.get(property);
      if (method === undefined) {
        method = observedMethod(store, String(property), value as (...args: unknown[]) => unknown, self, observers);
        methods.set(property, method);
      }
      return method;
    },
  });
}

/**
 * `method` observed. What an untraced call needs (the failure counter) is made here, once per
 * method: the store calls of every request (an event append per resolve) make no closure of
 * their own, and a promise only for the counter (metrics on, the default).
 */
function observedMethod(store: string, operation: string, method: (...args: unknown[]) => unknown, self: object, observers: StoreObservers): (...args: unknown[]) => unknown {
  const { metrics, failed } = observers;
  const counted = (error: unknown): never => {
    metrics?.storeError(store, operation);
    failed?.(store, operation, error);
    throw error;
  };
  // `arguments` handed on by `apply`, not a rest parameter: V8 forwards them without making the
  // array a rest parameter is (~0.1 KiB a resolve), but where a closure keeps them (a traced call).
  return function observed(this: unknown): unknown {
    const parent = context.active();
    if (trace.getSpan(parent) !== undefined) {
      const args = [...arguments] as unknown[];
      return tracedCall(store, operation, observers, parent, () => method.apply(self, args));
    }
    // Nothing to count or tell (metrics and the log off) and no request span: the call as is, with no promise added.
    if (metrics === undefined && failed === undefined) return method.apply(self, arguments as unknown as unknown[]);
    let result: unknown;
    try {
      result = method.apply(self, arguments as unknown as unknown[]);
    } catch (error) {
      counted(error);
    }
    return result instanceof Promise ? result.catch(counted) : result;
  };
}

/** A call in a request's trace: a child span around it, failures counted and recorded on it. */
function tracedCall(store: string, operation: string, observers: StoreObservers, parent: Context, call: () => unknown): unknown {
  const span = observers.tracer.startSpan(`store ${store}.${operation}`, { attributes: { "vane.store": store, "db.operation.name": operation } }, parent);
  const failed = (error: unknown) => {
    observers.metrics?.storeError(store, operation);
    observers.failed?.(store, operation, error);
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR });
  };
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    failed(error);
    span.end();
    throw error;
  }
  if (!(result instanceof Promise)) {
    span.end();
    return result;
  }
  return result.then(
    (value: unknown) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      failed(error);
      span.end();
      throw error;
    },
  );
}
