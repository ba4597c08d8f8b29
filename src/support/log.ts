import { pino, type DestinationStream, type Logger as PinoLogger } from "pino";
import pretty from "pino-pretty";
import { mergeTraceLogFields, traceLogFields } from "./tracing.js";

export type Logger = PinoLogger;
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
export const LOG_LEVELS: readonly LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** How log lines are written: one JSON object per line (for machines), or a line for people. */
export type LogFormat = "json" | "pretty";
/** KAIROS_LOG_FORMAT: a format, or `auto` (unset). */
export type LogFormatSetting = LogFormat | "auto";
export const LOG_FORMATS: readonly LogFormatSetting[] = ["json", "pretty", "auto"];

/**
 * The format a role logs in: the one asked for (KAIROS_LOG_FORMAT), else lines for people when
 * `kairos dev` writes to a terminal, and JSON everywhere else (a pipe, a file, a log collector,
 * every production role).
 */
export function logFormat(setting: LogFormatSetting, role: string, stdoutIsTty: boolean): LogFormat {
  if (setting !== "auto") return setting;
  return role === "dev" && stdoutIsTty ? "pretty" : "json";
}

/**
 * Logs on stdout, with `component` and ids as fields (and `trace_id`/`span_id` inside a span): structured JSON (one object per line), or
 * for people (`format: "pretty"`: time, level, component and message on one line, the other
 * fields below it; colours where the terminal takes them and NO_COLOR is unset).
 */
export function createLogger(level: LogLevel, bindings: Record<string, unknown> = {}, format: LogFormat = "json", destination?: DestinationStream): Logger {
  if (format === "pretty") {
    const stream = pretty({
      sync: true,
      singleLine: true,
      translateTime: "SYS:HH:MM:ss.l",
      ignore: "pid,hostname,role,component",
      messageFormat: "{if component}{component}: {end}{msg}",
      ...(destination ? { destination, colorize: false } : {}),
    });
    return pino({ level, base: { pid: process.pid, ...bindings }, mixin: traceLogFields, mixinMergeStrategy: mergeTraceLogFields }, stream);
  }
  const options = {
    level,
    base: { pid: process.pid, ...bindings },
    // trace_id and span_id of the active span, when tracing is on (src/support/tracing.ts).
    mixin: traceLogFields,
    mixinMergeStrategy: mergeTraceLogFields,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that drops everything: for tests and embedded components. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
