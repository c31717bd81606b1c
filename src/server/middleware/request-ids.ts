// X-Request-Id for requests that bring none: a UUID (docs/api.md) made from a per-process random
// prefix and a counter, not crypto.randomUUID() per request. The ids need to be unique, not secret:
// the prefix's 74 random bits keep two processes apart, the counter's 48 bits the requests of one.
const COUNTER_DIGITS = 12;
const COUNTER_LIMIT = 2 ** (4 * COUNTER_DIGITS);

export class RequestIds {
  /** The random UUID's first four groups and their dashes: 24 characters, version 4 and its variant kept. */
  private prefix = "";
  private count = COUNTER_LIMIT;

  next(): string {
    if (this.count === COUNTER_LIMIT) {
      this.prefix = crypto.randomUUID().slice(0, 24);
      this.count = 0;
    }
    return this.prefix + (this.count++).toString(16).padStart(COUNTER_DIGITS, "0");
  }
}
