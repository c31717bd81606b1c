// One page's data from the console API, read once when the page opens.
import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api.js";

export type Loaded<T> = { data?: T; error?: string };

export function useData<T>(path: string): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({});
  useEffect(() => {
    getJson<T>(path).then(
      (data) => setState({ data }),
      (error: unknown) => setState({ error: error instanceof Error ? error.message : String(error) }),
    );
  }, [path]);
  return state;
}
