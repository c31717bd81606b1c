// The console's built files (scripts/build-console.mjs): names that carry their content's hash, so
// each is cached for a year, and manifest.json naming the current ones. The page shell is built
// from the manifest; it holds no data (the script asks the API for it), so the sign-in page is the
// same shell. A host without the built files serves a shell that says how to build them.

/** Reads a built file by name; undefined when there is no such file. */
export type AssetReader = (name: string) => Promise<Uint8Array | undefined>;

export interface Asset {
  readonly bytes: Uint8Array;
  readonly type: string;
}

interface Manifest {
  readonly script: string;
  readonly style: string;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json",
  svg: "image/svg+xml",
};
/** A plain file name: no path, so no reader is ever asked for something outside its folder. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*\.([a-z]+)$/;

const decoder = new TextDecoder();

export class ConsoleAssets {
  private manifest: Promise<Manifest | undefined> | undefined;

  constructor(private readonly reader: AssetReader) {}

  async read(name: string): Promise<Asset | undefined> {
    const type = TYPES[NAME.exec(name)?.[1] ?? ""];
    if (type === undefined || name === "manifest.json") return undefined;
    const bytes = await this.reader(name);
    return bytes === undefined ? undefined : { bytes, type };
  }

  /** The HTML every page starts as. */
  async shell(): Promise<string> {
    const manifest = await this.currentManifest();
    if (manifest === undefined) {
      return page('<main><h1>Vane console</h1><p>The console\'s files are not built: run <code>npm run build</code>, then reload.</p></main>', "");
    }
    const head = `<link rel="stylesheet" href="/console/assets/${manifest.style}"><script type="module" src="/console/assets/${manifest.script}"></script>`;
    return page('<div id="app"></div><noscript>The console needs JavaScript.</noscript>', head);
  }

  private currentManifest(): Promise<Manifest | undefined> {
    // Read once: the files of a running server do not change; a failed read is tried again.
    this.manifest ??= this.reader("manifest.json").then((bytes) => {
      const parsed = bytes === undefined ? undefined : (JSON.parse(decoder.decode(bytes)) as Partial<Manifest>);
      if (typeof parsed?.script !== "string" || typeof parsed.style !== "string") {
        this.manifest = undefined;
        return undefined;
      }
      return { script: parsed.script, style: parsed.style };
    }, () => {
      this.manifest = undefined;
      return undefined;
    });
    return this.manifest;
  }
}

function page(body: string, head: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Vane console</title>${head}</head>
<body>${body}</body>
</html>
`;
}
