/** The chaos scenario's count of run-end and RECOVERED alerts (test/chaos/run-alerts.ts), on hand-made inputs. */
import { describe, expect, it } from "vitest";
import { countRunAlerts, runAlertViolations } from "./run-alerts.js";

// ok1, bad2 (FAILED), bad3 (DEAD), ok4 (a recovery), ok5, bad6 (TIMED_OUT), ok7 (a recovery).
const runs = [
  { id: "ok1", status: "SUCCEEDED", finishedAt: 1_000 },
  { id: "bad2", status: "FAILED", finishedAt: 2_000 },
  { id: "bad3", status: "DEAD", finishedAt: 3_000 },
  { id: "ok4", status: "SUCCEEDED", finishedAt: 4_000 },
  { id: "ok5", status: "SUCCEEDED", finishedAt: 5_000 },
  { id: "bad6", status: "TIMED_OUT", finishedAt: 6_000 },
  { id: "ok7", status: "SUCCEEDED", finishedAt: 7_000 },
];
const all = [
  { event: "RUN_FAILED", runId: "bad2" },
  { event: "RUN_DEAD", runId: "bad3" },
  { event: "RECOVERED", runId: "ok4" },
  { event: "RUN_TIMED_OUT", runId: "bad6" },
  { event: "RECOVERED", runId: "ok7" },
];

describe("countRunAlerts", () => {
  it("every bad run and every recovery received once, in grouped deliveries and a retried one: clean", () => {
    const a = countRunAlerts({ runs, messages: [{ deliveryId: "d1", alerts: all.slice(0, 3) }, { deliveryId: "d2", alerts: all.slice(3) }, { deliveryId: "d2", alerts: all.slice(3) }] });
    expect(a).toEqual({ expected: 3, received: 3, lost: 0, doubled: 0, unexpected: 0, recoveries: 2, recovered: 2, recoveredLost: 0, recoveredDoubled: 0, recoveredWrong: 0, deliveries: 2, requests: 3 });
    expect(runAlertViolations(a)).toEqual([]);
  });

  it("counts a bad run or a recovery not received as lost", () => {
    const a = countRunAlerts({ runs, messages: [{ deliveryId: "d1", alerts: [all[0]!, all[2]!] }] });
    expect(a).toMatchObject({ expected: 3, received: 1, lost: 2, recoveries: 2, recovered: 1, recoveredLost: 1 });
    expect(runAlertViolations(a)).toEqual(["2 run alerts lost", "1 recoveries without their RECOVERED alert"]);
  });

  it("two deliveries of one run's alert are doubled, and so are two of one recovery", () => {
    const a = countRunAlerts({ runs, messages: [{ deliveryId: "d1", alerts: all }, { deliveryId: "d2", alerts: [all[1]!, all[4]!] }] });
    expect(a).toMatchObject({ received: 3, doubled: 1, recovered: 2, recoveredDoubled: 1 });
  });

  it("an alert for a success, with the wrong event, or a RECOVERED after a success is unexpected", () => {
    const a = countRunAlerts({
      runs,
      messages: [{ deliveryId: "d1", alerts: [...all, { event: "RUN_FAILED", runId: "ok5" }, { event: "RUN_FAILED", runId: "bad3" }, { event: "RECOVERED", runId: "ok5" }, { event: "RUN_FAILED", runId: "nope" }] }],
    });
    expect(a).toMatchObject({ received: 3, unexpected: 3, recoveredWrong: 1 });
    expect(runAlertViolations(a)).toEqual(["3 run alerts for a run that did not end that way", "1 RECOVERED alerts naming a run that followed no failure"]);
  });

  it("a recovery is the first success after a bad run by end time, whatever order the runs are listed in", () => {
    const shuffled = [runs[6]!, runs[3]!, runs[0]!, runs[5]!, runs[1]!, runs[4]!, runs[2]!];
    expect(countRunAlerts({ runs: shuffled, messages: [{ deliveryId: "d", alerts: all }] })).toMatchObject({ recoveries: 2, recovered: 2, recoveredWrong: 0 });
  });

  it("no bad run at all: the run alerts were not exercised", () => {
    expect(runAlertViolations(countRunAlerts({ runs: [runs[0]!], messages: [] }))).toEqual(["no run of the watched job ended badly: the run alerts were not exercised"]);
  });
});
