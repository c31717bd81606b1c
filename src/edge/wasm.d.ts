// Workers (and wrangler's bundler) import a .wasm file as its compiled WebAssembly.Module.
declare module "*.wasm" {
  const compiled: WebAssembly.Module;
  export default compiled;
}
