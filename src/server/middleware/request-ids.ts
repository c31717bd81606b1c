// X-Request-Id for requests that bring none: a UUID (docs/api.md) made from a per-process random
// prefix and a counter, not crypto.randomUUID() per request. The ids need to be unique, not secret:
// the prefix's 74 random bits keep two processes apart, the counter the requests of one. The
// counter runs from 16^11 up to 16^12, so its hex is always the last group's 12 digits unpadded.
const FIRST = 16 ** 11;
const LIMIT = 16 ** 12;

export class RequestIds {
  /** The random UUID's first four groups and their dashes: 24 characters, version 4 and its variant kept. */
  private prefix = "";
  private count = LIMIT;

  next(): string {
    if (this.count === LIMIT) {
      this.prefix = crypto.randomUUID().slice(0, 24);
      this.count = FIRST;
    }
    return this.prefix + (this.count++).toString(16);
  }
}
