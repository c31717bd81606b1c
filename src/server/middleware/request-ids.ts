// X-Request-Id for requests that bring none: a UUID (docs/api.md) made from a per-process random
// prefix and a counter, not crypto.randomUUID() per request. The ids need to be unique, not secret:
// the prefix's 94 random bits keep two processes apart, the counter the requests of one. The
// counter runs from 16^6 up to 16^7, so its hex is always the last group's last 7 digits unpadded,
// and it stays a small integer: a double's hex (16^11 and up) took V8 six times as long.
const FIRST = 16 ** 6;
const LIMIT = 16 ** 7;

export class RequestIds {
  /** A random UUID's first 29 characters (its last group's first 5 digits included), version 4 and its variant kept. */
  private prefix = "";
  private count = LIMIT;

  next(): string {
    if (this.count === LIMIT) {
      this.prefix = crypto.randomUUID().slice(0, 29);
      this.count = FIRST;
    }
    return this.prefix + (this.count++).toString(16);
  }
}
