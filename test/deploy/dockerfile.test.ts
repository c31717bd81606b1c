// The Dockerfile's essentials, checked where no linter (hadolint) or docker engine is at hand
// (.ci/run builds and starts the image when `docker info` works): every file it copies from the
// build context is in a clean clone and not dockerignored, multi-stage, pinned bases, a non-root
// user, a HEALTHCHECK on /health at the port `vane serve` listens on, no secret baked in, and a
// .dockerignore that keeps installs, local data and keys out of the build context.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { serveVerb } from "../../src/cli/serve.js";

const ROOT = new URL("../../", import.meta.url);
const text = (path: string) => readFileSync(new URL(path, ROOT), "utf8");

interface Instruction {
  readonly op: string;
  readonly args: string;
}

/** Instructions with their continuation lines joined; comments and blank lines dropped. */
function instructions(dockerfile: string): Instruction[] {
  const joined = dockerfile.replace(/\\\r?\n/g, " ");
  return joined
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [op = "", ...rest] = line.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** The stages: each FROM and the instructions after it. */
function stages(all: Instruction[]): Instruction[][] {
  const found: Instruction[][] = [];
  for (const instruction of all) {
    if (instruction.op === "FROM") found.push([]);
    found.at(-1)?.push(instruction);
  }
  return found;
}

const dockerfile = instructions(text("Dockerfile"));
const runtime = stages(dockerfile).at(-1)!;
const args = (op: string, within = runtime) => within.filter((i) => i.op === op).map((i) => i.args);
const cmd = JSON.parse(args("CMD")[0] ?? "[]") as string[];
const option = (name: string) => cmd[cmd.indexOf(name) + 1];

/** What a clean clone holds: the tracked files, and every folder above one. */
function trackedPaths(): Set<string> {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: fileURLToPath(ROOT), encoding: "utf8" }).split("\0").filter((f) => f !== "");
  const paths = new Set<string>(["."]);
  for (const file of files) {
    const parts = file.split("/");
    for (let i = 1; i <= parts.length; i++) paths.add(parts.slice(0, i).join("/"));
  }
  return paths;
}

/** The sources of each COPY from the build context (not --from a stage), in either form. */
function contextSources(all: Instruction[]): string[] {
  return all
    .filter((i) => i.op === "COPY" && !/--from=/.test(i.args))
    .flatMap((i) => {
      const words = i.args.startsWith("[") ? (JSON.parse(i.args) as string[]) : i.args.split(/\s+/).filter((w) => !w.startsWith("--"));
      return words.slice(0, -1).map((source) => source.replace(/^\.\/(?=.)/, "").replace(/\/$/, ""));
    });
}

/** Whether a .dockerignore entry (a name, a folder, or a * pattern) leaves `path` out of the context. */
function ignores(entry: string, path: string): boolean {
  const pattern = new RegExp(`^${entry.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", "[^/]*")}(/.*)?$`);
  return pattern.test(path);
}

describe("Dockerfile", () => {
  it("copies from the build context only what a clean clone holds and .dockerignore lets through", () => {
    const sources = contextSources(dockerfile);
    expect(sources).toContain("package-lock.json");
    const tracked = trackedPaths();
    const ignored = text(".dockerignore").split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"));
    const missing = sources.filter((source) => !tracked.has(source) || !existsSync(new URL(source, ROOT)));
    expect(missing, "COPY sources that a clean clone does not have").toEqual([]);
    expect(sources.filter((source) => ignored.some((entry) => ignores(entry, source))), "COPY sources that .dockerignore leaves out").toEqual([]);
  });

  it("is multi-stage: the runtime stage copies what the build stage made", () => {
    expect(stages(dockerfile).length).toBeGreaterThanOrEqual(2);
    expect(args("FROM", dockerfile)[0]).toMatch(/ AS build$/i);
    const copies = args("COPY");
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) expect(copy).toMatch(/^--from=build /);
    expect(args("RUN", stages(dockerfile)[0]).join(" ")).toContain("npm prune --omit=dev");
  });

  it("builds from a pinned Node 20 base, never :latest", () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(text("Dockerfile"))?.[1];
    expect(base).toMatch(/^node:20[.\w-]*$/);
    for (const from of args("FROM", dockerfile)) expect(from).not.toMatch(/:latest\b/);
  });

  it("runs as a non-root user, set before the entrypoint", () => {
    const user = args("USER");
    expect(user).toHaveLength(1);
    expect(user[0]).not.toMatch(/^(root|0)(:|$)/);
    const at = (op: string) => runtime.findIndex((i) => i.op === op);
    expect(at("USER")).toBeLessThan(at("ENTRYPOINT"));
    expect(at("USER")).toBeLessThan(at("CMD"));
  });

  it("checks its health on /health at the port vane serve listens on, and exposes it and the metrics port", () => {
    const port = option("--port");
    expect(port).toMatch(/^\d+$/);
    const healthcheck = args("HEALTHCHECK")[0] ?? "";
    expect(healthcheck).toContain(`http://127.0.0.1:${port}/health`);
    expect(healthcheck).toMatch(/--interval=\d+s/);
    expect(option("--host")).toBe("0.0.0.0");
    const exposed = args("EXPOSE").join(" ").split(/\s+/);
    expect(exposed).toContain(port);
    expect(exposed).toContain(option("--metrics"));
  });

  it("starts vane serve with options it knows, in the data volume", () => {
    expect(args("ENTRYPOINT")[0]).toBe('["vane"]');
    expect(cmd[0]).toBe("serve");
    for (const name of cmd.filter((word) => word.startsWith("--"))) expect(serveVerb.usage).toContain(name);
    // The data folder (.vane, the default) is in the volume, which is the working folder: `docker exec` CLI verbs find it.
    expect(cmd).not.toContain("--data");
    const volume = JSON.parse(args("VOLUME")[0] ?? "[]") as string[];
    expect(volume).toEqual([args("WORKDIR").at(-1)]);
  });

  it("bakes in no secret", () => {
    const raw = text("Dockerfile");
    expect(raw).not.toMatch(/vane_(sk|pk|mk|ak)_/);
    for (const op of ["ENV", "ARG"]) {
      for (const declared of args(op, dockerfile)) expect(declared).not.toMatch(/(KEY|SECRET|TOKEN|PASSWORD)/i);
    }
    for (const copy of args("COPY", dockerfile)) expect(copy).not.toMatch(/\.env|\.db\b|\.vane/);
  });
});

describe(".dockerignore", () => {
  it("keeps installs, builds, git, local data and env files out of the context", () => {
    const ignored = text(".dockerignore").split(/\r?\n/).map((line) => line.trim());
    for (const entry of ["node_modules", "dist", "build", ".git", ".vane", "*.db", ".env"]) expect(ignored).toContain(entry);
  });
});

describe("docs/deploy.md and the Dockerfile agree", () => {
  const published = (command: string) => [...command.matchAll(/-p\s+(\S+)/g)].map((m) => m[1]);
  const deploy = text("docs/deploy.md").replace(/\\\r?\n\s*/g, " ");

  it("publishes the API and the metrics port alike (metrics on loopback only)", () => {
    const header = /^#\s+(docker run .*)$/m.exec(text("Dockerfile"))?.[1] ?? "";
    const documented = /^(docker run -d --name vane .*)$/m.exec(deploy)?.[1] ?? "";
    expect(published(header)).toEqual(["8787:8787", `127.0.0.1:${option("--metrics")}:${option("--metrics")}`]);
    expect(published(documented)).toEqual(published(header));
  });

  it("installs without building twice: npm ci's prepare script already builds", () => {
    const pkg = JSON.parse(text("package.json")) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toBe("npm run build");
    expect(deploy).not.toMatch(/npm ci\b[^\n]*&&\s*npm run build/);
  });
});
