// Requests Node's HTTP parser refuses before the app sees them (an unknown method, a malformed
// request line, headers past the size limit) would get Node's bare 400/431 with no body. Answer
// them in the contract's error shape instead, while the socket can still take an answer.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { errorBody } from "./errors.js";

const REFUSALS: Record<string, readonly [status: number, reason: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "Request headers exceed the server's size limit"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "The request was not received in time"],
};
const MALFORMED = [400, "Bad Request", "Malformed HTTP request"] as const;

export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset leaves nothing to say to.
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  // The answer to the request before this one on the connection is still being made: it goes out
  // first (an events POST's batch may be stored already: lost, its client would resend it), then
  // the refusal. Bounded: a stream's answer does not end.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight) {
    const giveUp = setTimeout(() => socket.destroy(), IN_FLIGHT_MS).unref();
    inFlight.once("finish", () => {
      clearTimeout(giveUp);
      setImmediate(() => refuse(error, socket)); // after Node has written the answer's last bytes
    });
    inFlight.once("close", () => clearTimeout(giveUp));
    return;
  }
  refuse(error, socket);
}

/** How long a refusal waits for the answer before it on the connection. */
const IN_FLIGHT_MS = 10_000;

function refuse(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] = REFUSALS[error.code ?? ""] ?? MALFORMED;
  const body = JSON.stringify(errorBody("BAD_REQUEST", message));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
