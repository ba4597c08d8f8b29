/**
 * What this node can still take: its slots (slot i has its own directories and runs as its own
 * uid, see sandbox/sandbox.ts) and the CPU and memory its running processes reserve. Bookkeeping
 * only: no clock of its own (callers pass `now`), no I/O, so its rules are tested on their own.
 *
 * A slot is a run's process: it frees when the process ends, while the claim and the result are
 * still being written (in batches with other runs' writes), so store latency does not idle the
 * slot and a burst of short runs starts at the pace of the processes, not of the writes. The
 * attempts still reporting are bounded by `reportBacklog`, so a slow MongoDB throttles pulling.
 */
import { fitsWithin } from "../core/index.js";
import type { ResourceRequest } from "../domain/index.js";

export interface CapacityLimits {
  slots: number;
  /** Attempts whose process ended but whose claim or result is still being written, at most. */
  reportBacklog: number;
  /** CPU and memory the runs of this node may reserve in total. */
  capacity: { cpu: number; memoryMb: number };
  /** The most one run may ask for. */
  runMax: ResourceRequest;
  /** After a taken run did not fit: no take for this long, unless a run ends first. */
  fullPauseMs: number;
}

export class Capacity {
  /** Slot numbers not running a process (slot 0 first, then the last freed). */
  private readonly freeSlotIds: number[] = [];
  /** CPU and memory reserved by running processes. */
  private readonly allocated = { cpu: 0, memoryMb: 0 };
  /** Attempts whose process has not ended yet (the slots in use). */
  private processes = 0;
  /** A taken run did not fit the free capacity: no take until a run ends (or until then). */
  private fullUntil = 0;

  constructor(private readonly limits: CapacityLimits) {
    for (let i = limits.slots - 1; i >= 0; i--) this.freeSlotIds.push(i);
  }

  /** Processes running (slots in use). */
  get running(): number {
    return this.processes;
  }

  /** Whether a run fits this node: within its per-run maximum and the capacity not yet reserved. */
  fits(r: ResourceRequest): boolean {
    const cap = this.limits.capacity;
    return fitsWithin(r, this.limits.runMax) && this.allocated.cpu + r.cpu <= cap.cpu + 1e-9 && this.allocated.memoryMb + r.memoryMb <= cap.memoryMb;
  }

  /**
   * How many more runs may be taken now, with `attempts` attempts on the node (running, or ended
   * and still reporting): the free slots, fewer when the report backlog is nearly full, none while
   * paused after a run did not fit.
   */
  free(now: number, attempts: number): number {
    if (now < this.fullUntil) return 0;
    return Math.min(this.limits.slots - this.processes, this.limits.slots + this.limits.reportBacklog - attempts);
  }

  /** Half the report backlog holds results: they must be written before more are held back. */
  backlogPressing(attempts: number): boolean {
    return attempts >= this.limits.slots + this.limits.reportBacklog / 2;
  }

  /** A process starts: reserves its resources and a slot, and returns the slot's number. */
  acquire(r: ResourceRequest): number {
    this.processes++;
    this.allocated.cpu += r.cpu;
    this.allocated.memoryMb += r.memoryMb;
    // Never empty: runs are taken only for free slots (see free).
    return this.freeSlotIds.pop()!;
  }

  /** A process ended and its slot was reset: both are free again, and a run that did not fit may now. */
  release(slot: number, r: ResourceRequest): void {
    this.freeSlotIds.push(slot);
    this.processes--;
    this.allocated.cpu -= r.cpu;
    this.allocated.memoryMb -= r.memoryMb;
    this.fullUntil = 0;
  }

  /**
   * A taken run did not fit (it went back to the queue for a node with room): stop taking until a
   * run ends here, or `fullPauseMs` passes.
   */
  markFull(now: number): void {
    this.fullUntil = now + this.limits.fullPauseMs;
  }
}
