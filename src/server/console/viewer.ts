// Who may open the console and what they see: the admin token sees every organization; an API key
// with the console:read scope sees its own organization (and its project, when pinned to one).
// Publishable keys never sign in (they ship in browser code), nor does a key without the scope,
// a revoked or expired one, or anything else: each is the same 401, so a refusal tells nothing.
import { constantTimeEqual, keyKind, secretHash, type Sha256 } from "../auth/api-key.js";
import { equalBytes } from "../admin/admin-token.js";
import { keyStatus } from "../admin/key-operations.js";
import type { KeyRecord, KeyStore } from "../../store/types.js";

export const CONSOLE_SCOPE = "console:read";
export const ADMIN = "admin";

/** What a session may read: every organization (the admin token) or one, optionally one project. */
export interface Viewer {
  /** "admin" or the key's id. */
  readonly who: string;
  readonly orgId?: string;
  readonly projectId?: string;
}

export interface ViewerDependencies {
  readonly keys: KeyStore;
  readonly sha256: Sha256;
  /** The server's admin token, when it has one. */
  readonly adminToken?: string;
  readonly now: () => number;
}

const encoder = new TextEncoder();

/** The viewer `token` signs in as, or undefined when it may not. */
export async function signIn(token: string, deps: ViewerDependencies): Promise<Viewer | undefined> {
  if (deps.adminToken !== undefined && equalBytes(deps.sha256(encoder.encode(token)), deps.sha256(encoder.encode(deps.adminToken)))) return { who: ADMIN };
  if (keyKind(token) === undefined) return undefined;
  const hash = secretHash(token, deps.sha256);
  const key = await deps.keys.byHash(hash);
  if (key === undefined || !constantTimeEqual(key.secretHash, hash)) return undefined;
  return keyViewer(key, deps.now());
}

/** The viewer of a session, read afresh: a key revoked, expired or stripped of the scope since sign-in sees nothing. */
export async function sessionViewer(who: string, deps: ViewerDependencies): Promise<Viewer | undefined> {
  if (who === ADMIN) return deps.adminToken === undefined ? undefined : { who: ADMIN };
  const key = await deps.keys.byId(who);
  return key === undefined ? undefined : keyViewer(key, deps.now());
}

function keyViewer(key: KeyRecord, now: number): Viewer | undefined {
  if (key.kind === "pk" || !key.scopes.includes(CONSOLE_SCOPE)) return undefined;
  const status = keyStatus(key, now);
  if (status === "revoked" || status === "expired") return undefined;
  return { who: key.id, orgId: key.orgId, ...(key.projectId !== undefined && { projectId: key.projectId }) };
}

/** Whether the viewer may see something of this organization and project. */
export function sees(viewer: Viewer, of: { readonly orgId: string; readonly projectId?: string }): boolean {
  if (viewer.orgId !== undefined && viewer.orgId !== of.orgId) return false;
  return viewer.projectId === undefined || of.projectId === undefined || viewer.projectId === of.projectId;
}
