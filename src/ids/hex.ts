// Two lowercase hex digits per byte value: key hashes, and the ids the server and the SDK make.
export const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
