/**
 * Why a URL given by a user does not parse, in words (WHATWG's URL parser says only "Invalid URL"):
 * an HTTP job's URL and an alert rule's webhook share it, each saying what it expects after it.
 */

/** What is wrong with `raw`, which `new URL` refused: the most likely cause first. */
export function urlParseProblem(raw: string): string {
  const text = raw.trim();
  const shown = `"${text.slice(0, 200)}"`;
  if (!/^[a-z][a-z0-9+.-]*:/i.test(text)) return `${shown} has no scheme (start it with https:// or http://)`;
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(text)?.[1];
  if (authority !== undefined) {
    const host = authority.slice(authority.lastIndexOf("@") + 1);
    const port = /:([^:\]]*)$/.exec(host)?.[1];
    if (port !== undefined && port !== "" && !/^\d+$/.test(port)) return `${shown}: its port "${port.slice(0, 20)}" is not a number`;
    if (port !== undefined && /^\d+$/.test(port) && Number(port) > 65_535) return `${shown}: its port ${port.length > 6 ? `${port.slice(0, 6)}…` : port} is beyond 65535`;
    if (/\s/.test(host)) return `${shown}: its host name holds a space`;
    if (host === "" || host.startsWith(":")) return `${shown} names no host`;
  }
  return `${shown} is not a URL`;
}
