// vane/react: a provider for one client and hooks that read flags during render. Components
// re-render when a new bundle version arrives (the client's onChange, through React's
// useSyncExternalStore), so a toggle published with `vane flags set` reaches an open page at the
// next poll. React is a peer dependency; this file is built to dist/client/vane-react.js with
// React and the client left as imports (scripts/build-client.mjs).
import { type ReactNode, createContext, createElement, useCallback, useContext, useSyncExternalStore } from "react";
import type { JsonValue } from "../bundle/types.js";
import type { Details, Widen } from "./flag-values.js";
import type { VaneClient } from "./types.js";

const VaneContext = createContext<VaneClient | null>(null);

export interface VaneProviderProps {
  /** A client from createClient, made once (outside the component, or awaited before rendering). */
  readonly client: VaneClient;
  readonly children?: ReactNode;
}

export function VaneProvider({ client, children }: VaneProviderProps): ReactNode {
  return createElement(VaneContext.Provider, { value: client }, children);
}

/** The provider's client; throws outside a VaneProvider (a wiring mistake, not a flag problem). */
export function useVaneClient(): VaneClient {
  const client = useContext(VaneContext);
  if (client === null) throw new Error("vane/react: wrap the tree in <VaneProvider client={…}>");
  return client;
}

/** The bundle version in use; the component re-renders when a new one arrives. */
export function useConfigVersion(): string | undefined {
  const client = useVaneClient();
  const subscribe = useCallback((notify: () => void) => client.onChange(notify), [client]);
  const version = () => client.configVersion;
  return useSyncExternalStore(subscribe, version, version);
}

/** client.details(key, defaultValue, context), again at each new bundle version. Never throws. */
export function useFlagDetails<T extends JsonValue>(key: string, defaultValue: T, context: Record<string, unknown>): Details<Widen<T>> {
  const client = useVaneClient();
  useConfigVersion();
  return client.details(key, defaultValue, context);
}

/** A parameter's value for `context` (its type is the default's), again at each new bundle version. */
export function useFlag<T extends JsonValue>(key: string, defaultValue: T, context: Record<string, unknown>): Widen<T> {
  return useFlagDetails(key, defaultValue, context).value;
}
