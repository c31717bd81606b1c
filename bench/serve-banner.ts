// `vane serve` started by a bench script: its banner, once complete ("Stop with Ctrl-C."), for
// the URL and the first run's keys; rejects with what it printed if the server exits first.
import type { ChildProcess } from "node:child_process";

export function bannerOf(child: ChildProcess): Promise<string> {
  let banner = "";
  return new Promise<string>((ready, fail) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      banner += chunk.toString();
      if (banner.includes("Stop with Ctrl-C.")) ready(banner);
    });
    child.on("exit", (code) => fail(new Error(`vane serve exited (${code}):\n${banner}`)));
  });
}
