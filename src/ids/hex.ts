// Two lowercase hex digits per byte value: key hashes and ETags.
export const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
