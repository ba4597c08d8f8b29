import { StaleEpochError } from "../ports.js";

/** Negative status codes the fenced scripts return (see lua/includes/fence.ts). */
export const ScriptCode = {
  /** Another member acquired the shard since (the epoch moved on). */
  EpochSuperseded: -1,
  /** The lease with this epoch is gone: released, or collected by its PEXPIRE. */
  LeaseReleased: -2,
  /** The lease is still ours on paper but expired at the caller's `now`. */
  LeaseExpired: -3,
} as const;

const reasons: Record<number, string> = {
  [ScriptCode.EpochSuperseded]: "epoch-superseded",
  [ScriptCode.LeaseReleased]: "lease-released",
  [ScriptCode.LeaseExpired]: "lease-expired",
};

/** The one place a script status code becomes an error (STYLE H6). */
export function scriptError(code: number, ctx: { shard: number; epoch: number; op: string }): Error {
  const reason = reasons[code];
  if (reason) return new StaleEpochError(ctx.shard, ctx.epoch, `${ctx.op}: ${reason}`);
  return new Error(`shard ${ctx.shard}: unknown status ${code} from script ${ctx.op}`);
}
