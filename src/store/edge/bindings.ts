// The parts of Cloudflare's bindings the edge stores use, typed here by their shape: the Workers
// type package is not a dependency, and tests hand the same stores miniflare's bindings from Node.

export interface D1Result<T> {
  readonly results: T[];
  readonly meta: { readonly changes?: number };
}

export interface D1PreparedStatement {
  bind(...values: unknown[]): D1PreparedStatement;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<D1Result<T>>;
  run(): Promise<D1Result<unknown>>;
}

export interface D1Database {
  prepare(sql: string): D1PreparedStatement;
  /** The statements in one transaction: all or none. */
  batch(statements: D1PreparedStatement[]): Promise<D1Result<unknown>[]>;
}

export interface KVNamespace {
  get(key: string, type: "text"): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
}

export interface R2ObjectBody {
  text(): Promise<string>;
}

export interface R2Bucket {
  put(key: string, value: string | Uint8Array): Promise<unknown>;
  get(key: string): Promise<R2ObjectBody | null>;
  delete(key: string): Promise<void>;
}

export interface Queue<T> {
  send(body: T): Promise<void>;
}

export interface QueueMessage<T> {
  readonly id: string;
  readonly body: T;
  readonly attempts: number;
  ack(): void;
  retry(): void;
}

export interface MessageBatch<T> {
  readonly queue: string;
  readonly messages: readonly QueueMessage<T>[];
}
