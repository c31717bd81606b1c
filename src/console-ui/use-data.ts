// One page's data from the console API, read when the page opens and again when `generation`
// grows (a live update said it changed).
import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api.js";

export type Loaded<T> = { data?: T; error?: string };

export function useData<T>(path: string, generation = 0): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({});
  useEffect(() => {
    getJson<T>(path).then(
      (data) => setState({ data }),
      (error: unknown) => setState({ error: error instanceof Error ? error.message : String(error) }),
    );
  }, [path, generation]);
  return state;
}
