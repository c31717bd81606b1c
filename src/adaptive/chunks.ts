// Slot numbers as (chunk, offset) for the pending book's columns (issue 33): growing adds a chunk
// and copies nothing, where one array per column, copied whole at each growth, held the event
// loop for 140–200 ms at 0.5–1 M pending decisions (the id table's rebuild included). A small
// book's only chunk starts at FIRST_CHUNK slots and doubles (a copy of at most CHUNK slots) until
// it is a whole chunk, so a book of a few decisions stays small. Shrinking is the way back: whole
// tail chunks let go, then the only chunk halved (a copy of at most CHUNK / 2 slots).
export const CHUNK_BITS = 14;
/** Slots a chunk: 16 Ki, ~0.5 MB of columns for a Thompson decision. */
export const CHUNK = 1 << CHUNK_BITS;
export const OFFSET_MASK = CHUNK - 1;
const FIRST_CHUNK = 1024;

/** Room after one growth from `capacity` slots: a power of two up to CHUNK, then whole chunks. */
export function grownCapacity(capacity: number): number {
  return capacity < CHUNK ? Math.max(FIRST_CHUNK, capacity * 2) : capacity + CHUNK;
}

/** Room for at least `slots`, as growth from nothing reaches it. */
export function roomFor(slots: number): number {
  let capacity = FIRST_CHUNK;
  while (capacity < slots) capacity = grownCapacity(capacity);
  return capacity;
}

/**
 * Room to keep once the slots from `used` up are unused: tail chunks let go while half a chunk
 * stays spare (so a book at a chunk's edge does not grow and shrink by turns), then the only chunk
 * cut to twice what is used once it is under a quarter used.
 */
export function shrunkCapacity(capacity: number, used: number): number {
  while (capacity > CHUNK && capacity - CHUNK >= used + CHUNK / 2) capacity -= CHUNK;
  return capacity <= CHUNK && capacity > FIRST_CHUNK && used * 4 <= capacity ? roomFor(used * 2) : capacity;
}

type Chunk = Int32Array | Uint32Array | Uint16Array | Uint8Array | Float64Array;

/** A column's chunks grown to `capacity` (from grownCapacity): its only chunk made longer (copied) up to CHUNK, else one more chunk. */
export function growChunks<T extends Chunk>(chunks: T[], capacity: number, make: (length: number) => T, perSlot = 1): void {
  if (capacity > CHUNK) {
    chunks.push(make(CHUNK * perSlot));
    return;
  }
  const first = make(capacity * perSlot);
  if (chunks.length > 0) first.set(chunks[0]! as never);
  chunks[0] = first;
}

/** A column's chunks cut to `capacity` (from shrunkCapacity): tail chunks dropped, or the only chunk copied shorter. */
export function shrinkChunks<T extends Chunk>(chunks: T[], capacity: number, perSlot = 1): void {
  if (capacity >= CHUNK) {
    chunks.length = capacity / CHUNK;
    return;
  }
  chunks.length = 1;
  chunks[0] = chunks[0]!.slice(0, capacity * perSlot) as T;
}
