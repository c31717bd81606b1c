// What middleware hands to routes through Hono's context.
import type { KeyRecord } from "../store/types.js";

export interface AppEnv {
  Variables: {
    /** The authenticated API key. */
    key: KeyRecord;
  };
}
