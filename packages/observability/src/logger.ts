import winston from 'winston';
import { redactRecord } from './redact';

export type Logger = winston.Logger;
export type LogLevel = 'error' | 'warn' | 'info' | 'http' | 'verbose' | 'debug';

export interface LoggerOptions {
  /** The app, e.g. `server` or `docker-executor`; on every line as `service`. */
  service: string;
  level?: LogLevel;
  /** Where JSON lines go; stdout by default (tests pass their own stream). */
  stream?: NodeJS.WritableStream;
}

const redaction = winston.format((info) => redactRecord(info));

/**
 * A JSON-lines logger: `{"level","message","service","timestamp",...fields}`
 * with secrets redacted (see redact.ts). Errors logged directly keep their
 * stack, redacted too.
 */
export function createLogger(options: LoggerOptions): Logger {
  return winston.createLogger({
    level: options.level ?? 'info',
    defaultMeta: { service: options.service },
    format: winston.format.combine(
      winston.format.errors({ stack: true }),
      redaction(),
      winston.format.timestamp(),
      winston.format.json(),
    ),
    transports: [
      options.stream
        ? new winston.transports.Stream({ stream: options.stream })
        : new winston.transports.Console(),
    ],
  });
}
