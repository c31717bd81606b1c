// Two lowercase hex digits per byte value: the key hashes and the ids the server writes.
export const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
