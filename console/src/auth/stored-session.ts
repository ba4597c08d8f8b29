/**
 * The session as this tab keeps it: sessionStorage `kairos.session`. Read here without React, so the
 * console's first-request script (boot/first-query.ts) can read it before the app has loaded.
 */

export const SESSION_KEY = "kairos.session";

export interface Session {
  credential: string;
  /** How the user logged in: the API key's scope may forbid mutations. */
  via: "password" | "apiKey";
  user: { id: string; username: string; role: string };
  /** JWTs end; API keys may not (null). */
  expiresAt: string | null;
}

/** The kept session, or null when there is none, it cannot be read, or it has expired. */
export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(SESSION_KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    if (typeof s?.credential !== "string" || !s.credential) return null;
    if (s.expiresAt && Date.parse(s.expiresAt) <= Date.now()) return null;
    return s;
  } catch {
    return null;
  }
}
