// The Worker's console variables (src/edge/console.ts): VANE_CONSOLE turns it on, and its sessions'
// secret is VANE_CONSOLE_SECRET or one derived from VANE_ADMIN_TOKEN, never a random one per isolate.
import { describe, expect, it } from "vitest";
import { edgeConsoleOf } from "../../src/edge/console.js";

const FILES = { "manifest.json": "{}" };

describe("VANE_CONSOLE", () => {
  it.each([undefined, "", "off"])("%j leaves the console off", (value) => {
    expect(edgeConsoleOf({ VANE_CONSOLE: value, VANE_ADMIN_TOKEN: "t" }, FILES)).toBeUndefined();
  });

  it("refuses anything but on or off, naming the variable", () => {
    expect(() => edgeConsoleOf({ VANE_CONSOLE: "yes", VANE_ADMIN_TOKEN: "t" }, FILES)).toThrow('VANE_CONSOLE must be "on" or "off", got "yes"');
  });

  it("signs sessions with VANE_CONSOLE_SECRET when set, else with a secret derived from the admin token", () => {
    const secret = (vars: Record<string, string>) => Buffer.from(edgeConsoleOf({ VANE_CONSOLE: "on", ...vars }, FILES)!.sessionSecret!).toString("hex");
    expect(secret({ VANE_ADMIN_TOKEN: "a" })).toBe(secret({ VANE_ADMIN_TOKEN: "a" }));
    expect(secret({ VANE_ADMIN_TOKEN: "a" })).not.toBe(secret({ VANE_ADMIN_TOKEN: "b" }));
    expect(secret({ VANE_ADMIN_TOKEN: "a", VANE_CONSOLE_SECRET: "s" })).toBe(secret({ VANE_ADMIN_TOKEN: "b", VANE_CONSOLE_SECRET: "s" }));
  });

  it("is refused without a secret to sign sessions with", () => {
    expect(() => edgeConsoleOf({ VANE_CONSOLE: "on" }, FILES)).toThrow("set VANE_ADMIN_TOKEN or VANE_CONSOLE_SECRET");
  });

  it("serves the bundled files by name, and nothing else", async () => {
    const { assets } = edgeConsoleOf({ VANE_CONSOLE: "on", VANE_CONSOLE_SECRET: "s" }, FILES)!;
    expect(new TextDecoder().decode(await assets("manifest.json"))).toBe("{}");
    expect(await assets("toString")).toBeUndefined();
  });
});
