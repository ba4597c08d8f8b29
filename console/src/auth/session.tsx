/**
 * Who is logged in. The credential (a JWT from `login`, or an API key) is kept in this tab's
 * sessionStorage, so a reload keeps the user logged in and closing the tab forgets it; it is sent
 * only in headers and the WebSocket's connection_init, never in a URL, and never logged.
 */
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { Provider } from "urql";
import { createApiClient } from "../api/client";
import { SESSION_KEY as KEY, loadSession as load, type Session } from "./stored-session";

export type { Session } from "./stored-session";

interface SessionContext {
  session: Session | null;
  /** Why the last session ended, shown on the login page. */
  endedBecause: string | null;
  logIn(session: Session): void;
  logOut(reason?: string): void;
}

const Ctx = createContext<SessionContext | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(load);
  const [endedBecause, setEndedBecause] = useState<string | null>(null);

  const logOut = useCallback((reason?: string) => {
    sessionStorage.removeItem(KEY);
    setEndedBecause(reason ?? null);
    setSession(null);
  }, []);
  const logIn = useCallback((s: Session) => {
    sessionStorage.setItem(KEY, JSON.stringify(s));
    setEndedBecause(null);
    setSession(s);
  }, []);

  // A JWT's end logs the user out at that moment, with the reason.
  useEffect(() => {
    if (!session?.expiresAt) return;
    const ms = Date.parse(session.expiresAt) - Date.now();
    const t = setTimeout(() => logOut("Your session expired; log in again."), Math.max(0, Math.min(ms, 2 ** 31 - 1)));
    return () => clearTimeout(t);
  }, [session, logOut]);

  // Only the credential in use can end the session: a late refusal of one just replaced (a password
  // change revokes the old token) must not log the user out of the new one.
  const api = useMemo(() => {
    const credential = session?.credential ?? null;
    return createApiClient(credential, (why) => {
      if (load()?.credential === credential) logOut(why);
    });
  }, [session?.credential, logOut]);
  useEffect(() => () => api.close(), [api]);

  const value = useMemo(() => ({ session, endedBecause, logIn, logOut }), [session, endedBecause, logIn, logOut]);
  return (
    <Ctx.Provider value={value}>
      <Provider value={api.urql}>{children}</Provider>
    </Ctx.Provider>
  );
}

export function useSession(): SessionContext {
  const c = useContext(Ctx);
  if (!c) throw new Error("useSession outside SessionProvider");
  return c;
}

/** The logged-in session; only for views rendered behind the login. */
export function useUser(): Session {
  const { session } = useSession();
  if (!session) throw new Error("useUser without a session");
  return session;
}
