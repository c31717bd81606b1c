// API key strings (decisions.md §1): `vane_<kind>_<secret>`, the secret at least 32 characters of
// base62 or base64url. Only the SHA-256 of the whole string is stored; the public id is derived
// from that hash, so neither the store nor the logs ever hold a secret.
import type { KeyKind, KeyRecord, RateLimit } from "../../store/types.js";
import { HEX_BYTE } from "../../ids/hex.js";

const KEY_PATTERN = /^vane_(pk|sk|mk|ak)_([A-Za-z0-9_-]{32,256})$/;

/** The key's kind when the string has the key format, else undefined. */
export function keyKind(key: string): KeyKind | undefined {
  return KEY_PATTERN.exec(key)?.[1] as KeyKind | undefined;
}

/** Computes SHA-256; the server passes the engine's, the CLI node:crypto's. */
export type Sha256 = (bytes: Uint8Array) => Uint8Array;

const encoder = new TextEncoder();

export function secretHash(key: string, sha256: Sha256): string {
  let hex = "";
  for (const byte of sha256(encoder.encode(key))) hex += HEX_BYTE[byte];
  return hex;
}

/** The key's public handle, shown by `vane keys list` and accepted by revoke/rotate. */
export function keyIdOf(hash: string): string {
  return `key_${hash.slice(0, 16)}`;
}

/** Scratch for constantTimeEqual: each string's UTF-8, compared four bytes at a time. */
const COMPARE_BYTES = 1024;
const leftBytes = new Uint8Array(COMPARE_BYTES);
const rightBytes = new Uint8Array(COMPARE_BYTES);
const leftWords = new Uint32Array(leftBytes.buffer);
const rightWords = new Uint32Array(rightBytes.buffer);

/**
 * Equal strings in time that depends only on their length, so a hash compare leaks nothing.
 * Compared as UTF-8 a word at a time, when it fits: every request compares its Authorization
 * header (~80 characters), and a loop turn per character cost ~50 k instructions in V8's
 * baseline tier and ~5 k optimized, against ~10 k and ~2 k this way.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  // encodeInto writes a lone surrogate as U+FFFD, so two such strings could encode alike.
  if (a.length * 3 > COMPARE_BYTES || !a.isWellFormed() || !b.isWellFormed()) return equalPerCharacter(a, b);
  const words = utf8Words(a, leftBytes);
  let diff = words ^ utf8Words(b, rightBytes);
  for (let i = 0; i < words; i++) diff |= leftWords[i]! ^ rightWords[i]!;
  return diff === 0;
}

/** `text`'s UTF-8 written into `bytes` and zero-padded to a whole word; how many words. */
function utf8Words(text: string, bytes: Uint8Array): number {
  const written = encoder.encodeInto(text, bytes).written;
  const end = (written + 3) & ~3;
  for (let i = written; i < end; i++) bytes[i] = 0;
  return end >>> 2;
}

function equalPerCharacter(a: string, b: string): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A new key string with a 40-character base62 secret (~238 bits) from the Web Crypto RNG. */
export function generateKey(kind: KeyKind): string {
  const bytes = crypto.getRandomValues(new Uint8Array(40));
  let secret = "";
  // 248 = 4 × 62: rejecting bytes ≥ 248 keeps every character equally likely.
  for (const byte of bytes) if (byte < 248) secret += BASE62[byte % 62];
  return secret.length >= 32 ? `vane_${kind}_${secret}` : generateKey(kind);
}

/** A key as the import file and the CLI give it (decisions.md §8): the full secret in `key`. */
export interface KeyInput {
  readonly key: string;
  readonly orgId: string;
  readonly projectId?: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: string;
  readonly revoked?: boolean;
  readonly rateLimit?: RateLimit;
}

/** The stored form of a key: its hash and public id, never the secret. */
export function toKeyRecord(input: KeyInput, sha256: Sha256, createdAt: string): KeyRecord {
  const kind = keyKind(input.key);
  if (kind === undefined) throw new TypeError("key must have the form vane_<pk|sk|mk|ak>_<secret of 32+ base62/base64url characters>");
  const hash = secretHash(input.key, sha256);
  return {
    id: keyIdOf(hash),
    secretHash: hash,
    kind,
    orgId: input.orgId,
    ...(input.projectId !== undefined && { projectId: input.projectId }),
    scopes: [...input.scopes],
    createdAt,
    ...(input.expiresAt !== undefined && { expiresAt: input.expiresAt }),
    ...(input.revoked === true && { revokedAt: createdAt }),
    ...(input.rateLimit !== undefined && { rateLimit: input.rateLimit }),
  };
}
