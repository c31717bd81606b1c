// The parts of Durable Objects the Worker uses, typed by their shape (the Workers type package is
// not a dependency).

export interface DurableObjectId {
  toString(): string;
}

export interface DurableObjectStub {
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

export interface DurableObjectNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): DurableObjectStub;
}

/** What the runtime hands a Durable Object: its storage, of which the Worker uses the alarm. */
export interface DurableObjectState {
  readonly storage: {
    getAlarm(): Promise<number | null>;
    setAlarm(scheduledTime: number): Promise<void>;
  };
}
