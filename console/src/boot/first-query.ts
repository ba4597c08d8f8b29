/**
 * The console's first request, sent before the app has loaded. index.html loads this small script
 * (`async`, ahead of the app's: console/vite.config.ts adds it to the build) and, when the address
 * is the runs list (`/` or `/runs`, with its filters) and this tab keeps a session, it asks the API
 * for the list's first page at once. The app's GraphQL client takes that answer (boot/handoff.ts)
 * instead of asking again, so the API searches while the browser is still loading and starting the
 * app. The credential goes in the Authorization header, as the app sends it; never in the URL.
 */
import { loadSession } from "../auth/stored-session";
import { filtersFromSearch, runsPageVariables } from "../views/runs/filters";
import { offerFirstQuery } from "./handoff";

/** The runs list's search document as the app's client sends it (printed at build time: vite.config.ts). */
declare const __KAIROS_RUNS_SEARCH__: string;

function sendFirstQuery(): void {
  const path = location.pathname;
  if (path !== "/" && path !== "/runs") return;
  const session = loadSession();
  if (!session) return;
  // `/` redirects to /runs without its query string.
  const variables = runsPageVariables(filtersFromSearch(path === "/" ? "" : location.search), null);
  const operationName = "ConsoleRunsSearch";
  const response = fetch("/graphql", {
    method: "POST",
    headers: {
      accept: "application/graphql-response+json, application/graphql+json, application/json",
      "content-type": "application/json",
      authorization: `Bearer ${session.credential}`,
    },
    body: JSON.stringify({ operationName, query: __KAIROS_RUNS_SEARCH__, variables }),
  });
  // Taken by the app, or ignored: a failure here is the app's to report when it asks itself.
  response.catch(() => undefined);
  offerFirstQuery({ operationName, variables, credential: session.credential, at: Date.now(), response });
}

sendFirstQuery();
