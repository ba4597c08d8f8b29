/**
 * Server-side errors, shaped like MongoDB's so the official driver raises the same
 * `MongoServerError` (with the same numeric `code` and `codeName`) as it would against a real
 * server. Only codes the emulator actually produces are listed.
 */

export const ErrorCode = {
  InternalError: 1,
  BadValue: 2,
  NoSuchKey: 4,
  FailedToParse: 9,
  Unauthorized: 13,
  TypeMismatch: 14,
  AuthenticationFailed: 18,
  IllegalOperation: 20,
  NamespaceNotFound: 26,
  IndexNotFound: 27,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  NamespaceExists: 48,
  DollarPrefixedFieldName: 52,
  InvalidIdField: 53,
  NotSingleValueField: 54,
  EmptyFieldName: 56,
  CommandNotFound: 59,
  ImmutableField: 66,
  CannotCreateIndex: 67,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  NoReplicationEnabled: 76,
  IndexKeySpecsConflict: 86,
  CommandNotSupported: 115,
  CannotIndexParallelArrays: 171,
  UnsupportedOpQueryCommand: 352,
  DuplicateKey: 11000,
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

const NAME_BY_CODE = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

export function codeName(code: number): string {
  return NAME_BY_CODE.get(code) ?? `Location${code}`;
}

/** An error answered to the client as `{ok: 0, errmsg, code, codeName, ...extra}`. */
export class CommandError extends Error {
  readonly code: number;
  readonly extra: Record<string, unknown>;

  constructor(code: number, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.extra = extra;
  }

  get codeName(): string {
    return codeName(this.code);
  }

  /** Top-level command error reply. */
  toReply(): Record<string, unknown> {
    return { ok: 0, errmsg: this.message, code: this.code, codeName: this.codeName, ...this.extra };
  }

  /** Entry of a write command's `writeErrors` array. */
  toWriteError(index: number): Record<string, unknown> {
    return { index, code: this.code, errmsg: this.message, ...this.extra };
  }
}

export function commandError(name: ErrorCodeName, message: string, extra?: Record<string, unknown>): CommandError {
  return new CommandError(ErrorCode[name], message, extra);
}

/**
 * A violation of the wire protocol (bad length, unparsable BSON, unknown required flag bits).
 * The connection that sent it is closed; other connections are unaffected.
 */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtocolError";
  }
}
