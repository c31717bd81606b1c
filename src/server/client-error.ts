// Requests Node's HTTP parser refuses before the app sees them (an unknown method, a malformed
// request line, headers past the size limit) would get Node's bare 400/431 with no body. Answer
// them in the contract's error shape instead, while the socket can still take an answer.
import type { Socket } from "node:net";
import { errorBody } from "./errors.js";

const REFUSALS: Record<string, readonly [status: number, reason: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large", "Request headers exceed the server's size limit"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout", "The request was not received in time"],
};
const MALFORMED = [400, "Bad Request", "Malformed HTTP request"] as const;

export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  // A reset or a half-written answer leaves nothing to say to.
  if (error.code === "ECONNRESET" || !socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const [status, reason, message] = REFUSALS[error.code ?? ""] ?? MALFORMED;
  const body = JSON.stringify(errorBody("BAD_REQUEST", message));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
