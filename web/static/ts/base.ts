// base.ts exists because the console is served under a path prefix drawn
// per server start (/s/RANDOM/, the access cookie's path, so no other
// server on the host receives the cookie). The client names server paths
// as "/api/runs"; at() makes them relative to the page, so they stay under
// whatever prefix the page was served from.

/** at resolves a server path ("/api/runs") against the page's address. */
export function at(path: string): string {
  return path.replace(/^\/+/, "");
}
