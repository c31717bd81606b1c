// The append ring (append-ring.ts) on one thread: records come out as they went in, in order,
// across the ring's end, and a ring without room refuses a record whole.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type RingRecord, RingReader, RingWriter, ringMemory } from "../../src/store/sqlite/writer/append-ring.js";
import { EncodedText } from "../../src/server/encoded-text.js";
import { TextPieces } from "../../src/server/text-pieces.js";
import { LOG_FORMAT_COMPACT } from "../../src/store/log-row.js";

const AT = "2026-11-28T04:00:00.123Z";
const row = (text: string) => ({ text, format: LOG_FORMAT_COMPACT }) as const;

/** A record with its text's bytes decoded, before their room is freed. */
function withText(record: RingRecord): unknown {
  if (record.kind === "message") return record;
  const { bytes, textAt, textBytes, ...rest } = record;
  return { ...rest, text: bytes.toString("utf8", textAt, textAt + textBytes) };
}

/** Takes every published record; its room is freed. */
function takeAll(reader: RingReader): unknown[] {
  const taken = [];
  for (let record = reader.peek(); record !== undefined; record = reader.peek()) {
    taken.push(withText(record));
    reader.take();
  }
  reader.release();
  return taken;
}

describe("the append ring", () => {
  it("gives the records back in order, their texts whole, however often they wrap around its end", () => {
    fc.assert(
      // A turn's records (at most 4 × 136 bytes, and a skip at the end) always fit in 1 KiB.
      fc.property(fc.array(fc.array(fc.string({ unit: "binary", maxLength: 12 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 40 }), (turns) => {
        const memory = ringMemory(1024);
        const writer = new RingWriter(memory);
        const reader = new RingReader(memory);
        let id = 1;
        for (const texts of turns) {
          const sent = [];
          for (const text of texts) {
            expect(writer.put(id, 1000 + id, row(text), 1, AT)).toBe(true);
            sent.push({ kind: "inline", id, sentAt: 1000 + id, text, format: LOG_FORMAT_COMPACT, count: 1, newest: AT });
            id++;
          }
          expect(reader.any()).toBe(false);
          writer.publish();
          expect(takeAll(reader)).toEqual(sent);
        }
      }),
    );
  });

  it("refuses a record it has no room for, writing nothing, and takes it once the reader has freed the room", () => {
    const memory = ringMemory(256);
    const writer = new RingWriter(memory);
    const reader = new RingReader(memory);
    const text = "x".repeat(20);
    let id = 1;
    while (writer.put(id, 0, row(text), 1, AT)) id++;
    expect(id).toBeGreaterThan(2);
    expect(writer.wantRoom()).toBe(true);
    writer.publish();
    expect(takeAll(reader).map((record) => (record as { id: number }).id)).toEqual(Array.from({ length: id - 1 }, (_, i) => i + 1));
    expect(writer.put(id, 0, row(text), 1, AT)).toBe(true);
    writer.publish();
    expect(takeAll(reader)).toEqual([{ kind: "inline", id, sentAt: 0, text, format: LOG_FORMAT_COMPACT, count: 1, newest: AT }]);
  });

  it("says a text is too large when it might not fit in half the ring, and keeps a stand-in's place among the records", () => {
    const memory = ringMemory(256);
    const writer = new RingWriter(memory);
    const reader = new RingReader(memory);
    expect(writer.tooLarge(row("y".repeat(20)), AT)).toBe(false);
    expect(writer.tooLarge(row("y".repeat(40)), AT)).toBe(true);
    writer.put(1, 0, row("a"), 1, AT);
    writer.putStandIn(2);
    writer.put(3, 0, row("c"), 1, AT);
    writer.publish();
    expect(takeAll(reader).map((record) => (record as { kind: string }).kind)).toEqual(["inline", "message", "inline"]);
  });

  it("writes a text's pieces in place, as their join would be", () => {
    const memory = ringMemory(256);
    const writer = new RingWriter(memory);
    const reader = new RingReader(memory);
    const pieces = new TextPieces();
    pieces.push('["', AT, '",');
    pieces.quoted("é\u{1F600}");
    pieces.push("]");
    const piecesRow = pieces.row(LOG_FORMAT_COMPACT);
    expect(writer.put(1, 0, piecesRow, 1, AT)).toBe(true);
    writer.publish();
    expect(takeAll(reader)).toEqual([{ kind: "inline", id: 1, sentAt: 0, text: `["${AT}","é\u{1F600}"]`, format: LOG_FORMAT_COMPACT, count: 1, newest: AT }]);
    // Its pieces are gone with it: a second use is a bug, and says so.
    expect(() => piecesRow.writeUtf8(Buffer.alloc(64), 0)).toThrow(/pieces were used/);
  });

  it("writes any pieces, short or long, ASCII or not, encoded or not, as their join's UTF-8, at any alignment", () => {
    const memory = ringMemory(1 << 15);
    const writer = new RingWriter(memory);
    const reader = new RingReader(memory);
    const pieces = new TextPieces();
    const text = fc.oneof(fc.string({ unit: "binary", maxLength: 8 }), fc.string({ maxLength: 100 }), fc.string({ unit: "binary", minLength: 60, maxLength: 100 }));
    const piece = fc.oneof(text, text.map((t) => new EncodedText(t)));
    // The newest time's length moves where the text starts against the ring's words.
    const newest = fc.string({ unit: fc.constantFrom("0", "1", "Z"), maxLength: 11 });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.array(piece, { maxLength: 12 }), newest), { minLength: 1, maxLength: 3 }), (rows) => {
        const sent = [];
        for (const [parts, time] of rows) {
          for (const part of parts) pieces.push(part);
          expect(writer.put(1, 0, pieces.row(LOG_FORMAT_COMPACT), 1, time)).toBe(true);
          sent.push({ text: parts.join(""), newest: time });
        }
        writer.publish();
        expect(takeAll(reader).map((record) => ({ text: (record as { text: string }).text, newest: (record as { newest: string }).newest }))).toEqual(sent);
      }),
      { numRuns: 500 },
    );
  });

  it("writes pieces longer than its staging buffer held, and shorter ones after them, whole", () => {
    // The pieces go through a staging buffer of the writer's own (8 KiB at first, up to 3 bytes a
    // character): rows past it make it grow, and a short row after a long one must not carry
    // what the long one left there.
    const memory = ringMemory(1 << 17);
    const writer = new RingWriter(memory);
    const reader = new RingReader(memory);
    const pieces = new TextPieces();
    const long = (n: number) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? new EncodedText(`é${i}`.repeat(40)) : `"${i}€"`.repeat(30)));
    const sent = [];
    for (const [parts, time] of [[long(30), "1"], [["a", new EncodedText("b")], "12"], [long(200), ""], [[new EncodedText("ü".repeat(50)), "c"], "123"]] as const) {
      for (const part of parts) pieces.push(part);
      expect(writer.put(1, 0, pieces.row(LOG_FORMAT_COMPACT), 1, time)).toBe(true);
      sent.push({ text: parts.join(""), newest: time });
    }
    expect(sent[2]!.text.length * 3).toBeGreaterThan(8192 * 4);
    writer.publish();
    expect(takeAll(reader).map((record) => ({ text: (record as { text: string }).text, newest: (record as { newest: string }).newest }))).toEqual(sent);
  });
});
