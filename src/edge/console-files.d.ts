// The console's built files (dist/console/), bundled into the Worker by scripts/build-edge.mjs:
// file name → text. Empty when the console was not built before the Worker.
declare module "vane:console-files" {
  const files: Readonly<Record<string, string>>;
  export default files;
}
