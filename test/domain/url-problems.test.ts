/** Why a URL does not parse, in words (src/domain/url-problems.ts), for HTTP jobs' URLs and alert webhooks. */
import { describe, expect, it } from "vitest";
import { urlParseProblem } from "../../src/domain/index.js";

describe("urlParseProblem", () => {
  it("names the part that is wrong", () => {
    for (const raw of ["https://example.com:99999/", "hooks.example.com/x", "https://exa mple.com/", "https://:80/", "https://example.com:8o/"]) expect(() => new URL(raw)).toThrow();
    expect(urlParseProblem("https://example.com:99999/")).toBe('"https://example.com:99999/": its port 99999 is beyond 65535');
    expect(urlParseProblem("https://example.com:123456789012/")).toBe('"https://example.com:123456789012/": its port 123456… is beyond 65535');
    expect(urlParseProblem("hooks.example.com/x")).toBe('"hooks.example.com/x" has no scheme (start it with https:// or http://)');
    expect(urlParseProblem("https://exa mple.com/")).toBe('"https://exa mple.com/": its host name holds a space');
    expect(urlParseProblem("https://:80/")).toBe('"https://:80/" names no host');
    expect(urlParseProblem("https://example.com:8o/")).toBe('"https://example.com:8o/": its port "8o" is not a number');
    expect(urlParseProblem("https://[::1/")).toBe('"https://[::1/" is not a URL');
  });
});
