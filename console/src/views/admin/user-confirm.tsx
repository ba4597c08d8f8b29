/** The confirmations of what an administrator does to a user, each naming the user. */
import { useEffect, useState } from "react";
import type { DeletedUserJobs } from "../../../../generated/client/graphql";
import { Confirm } from "../../ui/confirm";
import type { AdminUser } from "./use-users";

export type UserAction = "disable" | "revoke" | "delete";

export function UserConfirm(props: {
  pending: { action: UserAction; user: AdminUser } | null;
  onConfirm(action: UserAction, user: AdminUser, jobs: DeletedUserJobs): void;
  onCancel(): void;
}) {
  const { pending } = props;
  const [jobs, setJobs] = useState<DeletedUserJobs>("KEEP");
  useEffect(() => setJobs("KEEP"), [pending]);
  const name = pending?.user.username ?? "";
  const text = {
    disable: {
      title: `Disable ${name}?`,
      label: `Disable ${name}`,
      body: <p>{name} can no longer log in; their open sessions end at once and their tokens and API keys are refused. Their jobs keep running (pause them, or delete the user, to stop them). You can enable {name} again later.</p>,
    },
    revoke: {
      title: `Revoke ${name}'s tokens?`,
      label: `Revoke tokens of ${name}`,
      body: <p>Every login token {name} holds stops working now and their open sessions end; they can log in again. API keys are not affected.</p>,
    },
    delete: {
      title: `Delete ${name}?`,
      label: `Delete ${name}`,
      body: (
        <>
          <p>{name}'s tokens and API keys stop working at once, their open runs are cancelled, and their DAGs and DAG runs are deleted. This cannot be undone.</p>
          <fieldset className="admin-choice">
            <legend>{name}'s jobs</legend>
            <label className="inline">
              <input type="radio" name="deleted-user-jobs" value="KEEP" checked={jobs === "KEEP"} onChange={() => setJobs("KEEP")} />
              Keep them, paused, for reference
            </label>
            <label className="inline">
              <input type="radio" name="deleted-user-jobs" value="DELETE" checked={jobs === "DELETE"} onChange={() => setJobs("DELETE")} />
              Delete them
            </label>
          </fieldset>
        </>
      ),
    },
  }[pending?.action ?? "disable"];
  return (
    <Confirm
      open={!!pending}
      title={text.title}
      confirmLabel={text.label}
      danger
      onConfirm={() => pending && props.onConfirm(pending.action, pending.user, jobs)}
      onCancel={props.onCancel}
    >
      {text.body}
    </Confirm>
  );
}
