// One HTTP/1.1 exchange written byte for byte (the tests of what the front door reads from Node's
// request: header lines and targets no fetch client would send as given).
import { connect } from "node:net";

/** Sends `request` as it is on a new connection (it should ask to close it); the answer's head and body. */
export function exchange(port: number, request: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("end", () => {
      const start = text.indexOf("\r\n\r\n");
      resolve({ head: text.slice(0, start), body: text.slice(start + 4) });
    });
    socket.write(request);
  });
}
