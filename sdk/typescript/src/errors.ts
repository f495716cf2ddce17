import type { Problem } from "./types.js";

/** A non-2xx answer from countersign. */
export class CountersignError extends Error {
  override name = "CountersignError";
  constructor(
    readonly status: number,
    readonly problem: Partial<Problem>,
    readonly retryAfterMs = 0,
  ) {
    let s = `${status} ${statusText[status] ?? ""}`.trim();
    if (problem.error) s += " " + problem.error;
    if (problem.detail) s += ": " + JSON.stringify(problem.detail);
    super(s);
  }
  /** the server may answer differently if asked again */
  get transient(): boolean {
    return this.status >= 500 || this.status === 429 || this.status === 408;
  }
}

/** countersign answered something the client cannot trust. Fails closed. */
export class BadResponseError extends Error {
  override name = "BadResponseError";
  constructor(what: string) {
    super("countersign answered nonsense: " + what);
  }
}

const statusText: Record<number, string> = {
  400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
  408: "Request Timeout", 409: "Conflict", 413: "Request Entity Too Large", 422: "Unprocessable Entity",
  429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
  504: "Gateway Timeout",
};
