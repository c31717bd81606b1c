// vane/openfeature: OpenFeature providers that evaluate locally from the bundle with Vane's engine
// (docs/openfeature.md). Built by scripts/build-client.mjs to dist/client/vane-openfeature.js,
// which imports vane/client's file beside it rather than carrying a second copy.
export { VaneServerProvider, VaneWebProvider, type VaneProviderOptions } from "./providers.js";
