/**
 * The job editor: /jobs/new (createJob, with an idempotency key per intended creation, so a
 * repeated submit makes one job) and /jobs/:id/edit (updateJob with what changed). After a
 * create, the API's warnings are shown on the new job's page.
 */
import { useMemo, useRef } from "react";
import { Link, useLocation } from "wouter";
import { useMutation, useQuery } from "urql";
import { ConsoleCreateJobDocument, ConsoleJobDocument, ConsoleUpdateJobDocument } from "../../../../generated/client/graphql";
import { ErrorLine, Loading, Page } from "../../ui/page";
import { createInput, emptyForm, formOf, updateInput, type FormState } from "./form-model";
import { idempotencyKey } from "./idempotency";
import { JobForm } from "./job-form";
import { rememberWarnings } from "./warnings";
import "./jobs.css";

export function JobEditView({ id }: { id: string | null }) {
  return id ? <EditJob id={id} /> : <NewJob />;
}

function NewJob() {
  const [, navigate] = useLocation();
  const [, create] = useMutation(ConsoleCreateJobDocument);
  const initial = useMemo(emptyForm, []);
  // One key per intended creation: a resubmit of the same input (a double submit, a retry) gets the same job back;
  // a changed input is a new intent and gets a new key.
  const key = useRef<{ input: string; key: string } | null>(null);
  async function submit(f: FormState) {
    const input = createInput(f);
    const text = JSON.stringify(input);
    if (key.current?.input !== text) key.current = { input: text, key: idempotencyKey() };
    const r = await create({ input, idempotencyKey: key.current.key });
    if (r.error || !r.data) return r.error ?? null;
    rememberWarnings(r.data.createJob.id, r.data.createJob.warnings);
    navigate(`/jobs/${r.data.createJob.id}`);
    return null;
  }
  return (
    <Page title="New job">
      <JobForm initial={initial} creating submitLabel="Create job" onSubmit={submit} onCancel={() => navigate("/jobs")} />
    </Page>
  );
}

function EditJob({ id }: { id: string }) {
  const [, navigate] = useLocation();
  const [res] = useQuery({ query: ConsoleJobDocument, variables: { id, fires: 1 }, requestPolicy: "network-only" });
  const [, update] = useMutation(ConsoleUpdateJobDocument);
  const job = res.data?.job;
  const initial = useMemo(() => (job ? formOf(job) : null), [job]);
  if (res.error?.graphQLErrors.some((e) => e.extensions?.code === "NOT_FOUND")) {
    return (
      <Page title="Job not found">
        <p role="alert">No job of yours has this id. <Link href="/jobs">Go to your jobs</Link>.</p>
      </Page>
    );
  }
  if (!job || !initial) {
    return (
      <Page title="Edit job">
        <ErrorLine error={res.error} />
        {res.fetching && <Loading what="Loading the job" />}
      </Page>
    );
  }
  async function submit(f: FormState) {
    const input = updateInput(f, initial!);
    if (Object.keys(input).length === 0) {
      navigate(`/jobs/${id}`);
      return null;
    }
    const r = await update({ id, input });
    if (r.error) return r.error;
    navigate(`/jobs/${id}`);
    return null;
  }
  return (
    <Page title={`Edit ${job.name}`}>
      <JobForm key={job.id} initial={initial} creating={false} submitLabel="Save changes" onSubmit={submit} onCancel={() => navigate(`/jobs/${id}`)} />
    </Page>
  );
}
