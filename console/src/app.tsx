/** The console's frame: the navigation, and the view for the address. */
import { Suspense, lazy, useEffect, useRef } from "react";
import { Link, Redirect, Route, Switch, useLocation } from "wouter";
import { LoginView } from "./auth/login-view";
import { useSession } from "./auth/session";
import { ViewErrorBoundary } from "./ui/view-error";

// The runs list is where the console opens, so it is in the entry (no second round trip before the
// first rows); every other area is its own chunk, loaded when first visited.
import { RunsView } from "./views/runs/runs-view";
const RunView = lazy(() => import("./views/runs/run-view").then((m) => ({ default: m.RunView })));
const JobsView = lazy(() => import("./views/jobs/jobs-view").then((m) => ({ default: m.JobsView })));
const JobView = lazy(() => import("./views/jobs/job-view").then((m) => ({ default: m.JobView })));
const JobEditView = lazy(() => import("./views/jobs/job-edit-view").then((m) => ({ default: m.JobEditView })));
const DagsView = lazy(() => import("./views/dags/dags-view").then((m) => ({ default: m.DagsView })));
const DagView = lazy(() => import("./views/dags/dag-view").then((m) => ({ default: m.DagView })));
const DagRunView = lazy(() => import("./views/dags/dag-run-view").then((m) => ({ default: m.DagRunView })));
const NodesView = lazy(() => import("./views/nodes/nodes-view").then((m) => ({ default: m.NodesView })));
const DeadLettersView = lazy(() => import("./views/nodes/dead-letters-view").then((m) => ({ default: m.DeadLettersView })));
const AdminView = lazy(() => import("./views/admin/admin-view").then((m) => ({ default: m.AdminView })));
const ClusterView = lazy(() => import("./views/cluster/cluster-view").then((m) => ({ default: m.ClusterView })));
const AuditView = lazy(() => import("./views/audit/audit-view").then((m) => ({ default: m.AuditView })));
const AccountView = lazy(() => import("./views/admin/account-view").then((m) => ({ default: m.AccountView })));

const NAV: Array<{ href: string; label: string; admin?: boolean }> = [
  { href: "/runs", label: "Runs" },
  { href: "/jobs", label: "Jobs" },
  { href: "/dags", label: "DAGs" },
  { href: "/nodes", label: "Nodes" },
  { href: "/dead-letters", label: "Dead letters" },
  { href: "/cluster", label: "Cluster" },
  { href: "/audit", label: "Audit" },
  { href: "/admin", label: "Admin", admin: true },
  { href: "/account", label: "Account" },
];

export function App() {
  const { session, logOut } = useSession();
  const [location] = useLocation();
  const main = useRef<HTMLElement>(null);

  // After a navigation, focus goes to the new view's heading (screen readers announce it).
  useEffect(() => {
    const h = main.current?.querySelector<HTMLElement>("h1");
    h?.focus({ preventScroll: true });
  }, [location]);

  if (!session) return <LoginView />;
  const isAdmin = session.user.role === "ADMIN";
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <Link href="/runs" className="brand" aria-label="Kairos home">Kairos</Link>
        <nav aria-label="Main">
          <ul>
            {NAV.filter((n) => !n.admin || isAdmin).map((n) => (
              <li key={n.href}>
                <Link href={n.href} aria-current={location === n.href || location.startsWith(`${n.href}/`) ? "page" : undefined}>{n.label}</Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span title={session.via === "apiKey" ? "logged in with an API key" : undefined}>{session.user.username}</span>
          <button type="button" onClick={() => logOut()}>Log out</button>
        </div>
      </header>
      <main id="main" ref={main}>
        <ViewErrorBoundary address={location}>
        <Suspense fallback={<p className="muted" role="status">Loading…</p>}>
          <Switch>
            <Route path="/"><Redirect to="/runs" /></Route>
            <Route path="/runs"><RunsView /></Route>
            <Route path="/runs/:id">{(p) => <RunView id={p.id} />}</Route>
            <Route path="/jobs"><JobsView /></Route>
            <Route path="/jobs/new">{() => <JobEditView id={null} />}</Route>
            <Route path="/jobs/:id/edit">{(p) => <JobEditView id={p.id} />}</Route>
            <Route path="/jobs/:id">{(p) => <JobView id={p.id} />}</Route>
            <Route path="/dags"><DagsView /></Route>
            <Route path="/dags/:id">{(p) => <DagView id={p.id} />}</Route>
            <Route path="/dag-runs/:id">{(p) => <DagRunView id={p.id} />}</Route>
            <Route path="/nodes"><NodesView /></Route>
            <Route path="/dead-letters"><DeadLettersView /></Route>
            <Route path="/cluster"><ClusterView /></Route>
            <Route path="/audit"><AuditView /></Route>
            <Route path="/admin">{isAdmin ? <AdminView /> : <NotFound />}</Route>
            <Route path="/account"><AccountView /></Route>
            <Route><NotFound /></Route>
          </Switch>
        </Suspense>
        </ViewErrorBoundary>
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <section className="page">
      <h1 tabIndex={-1}>Not found</h1>
      <p>Nothing is at this address. <Link href="/runs">Go to the runs</Link>.</p>
    </section>
  );
}
