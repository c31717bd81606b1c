// Events the service refused one by one (validationErrors in a 200: a schema in reject mode, a
// value that is not a number): final, since a resend cannot change them. The error names each
// refused event, so onError, onEventsRefused and the OpenFeature providers' error event say
// which event went and why, not only an index into a batch the app never saw.

export interface RefusedEvent {
  /** The event's place in the batch sent. */
  readonly index: number;
  /** The service's reason. */
  readonly error: string;
  /** The event's name (a track event's `event`), or its type. */
  readonly event: string;
  /** The id the SDK gave it. */
  readonly id: string;
}

export class EventsRefused extends Error {
  readonly refused: readonly RefusedEvent[];

  constructor(errors: readonly { index: number; error: string }[], batch: readonly Record<string, unknown>[]) {
    const refused = errors.map(({ index, error }) => {
      const sent = batch[index] ?? {};
      return { index, error, event: String(sent.event ?? sent.type ?? "unknown"), id: String(sent.id ?? "") };
    });
    super(`${refused.length} event(s) refused by the service: ${refused.map((r) => `"${r.event}" (${r.error})`).join("; ")}`);
    this.name = "EventsRefused";
    this.refused = refused;
  }
}
