// Decision ids made on the client: UUIDv7 (RFC 9562), like the server's, so ids from both sort by
// time. getRandomValues rather than randomUUID: browsers give randomUUID only to secure pages.
const bytes = new Uint8Array(16);

export function uuidv7(nowMs: number): string {
  crypto.getRandomValues(bytes);
  let ms = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes[6] = 0x70 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  let out = "";
  for (let i = 0; i < 16; i++) {
    out += bytes[i]!.toString(16).padStart(2, "0");
    if (i === 3 || i === 5 || i === 7 || i === 9) out += "-";
  }
  return out;
}
