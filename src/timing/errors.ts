/**
 * The one error type of the timing core. Every refusal names the input field it is about and says
 * both what is wrong and what is allowed, so the API can hand it to the user unchanged
 * (`extensions.code = BAD_USER_INPUT`, `extensions.field = err.field`).
 *
 * The message always starts with `<field>: `, e.g.
 * `cron: minute field value 61 is out of range 0–59 in "61 * * * *"`.
 */
export class ScheduleError extends Error {
  constructor(
    /** The input field the refusal is about, e.g. `cron`, `timezone`, `retry.maxAttempts`. */
    readonly field: string,
    /** What is wrong and what is allowed, without the field prefix. */
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
    this.name = new.target.name;
  }
}
