import type {
  AirbyteCatalog,
  ConnectionStatus,
  ConnectorMessage,
  ConnectorSpecification,
  ErrorTrace,
} from './messages';
import type { ParsedLine } from './parse-message';

export type ConnectorOperation = 'spec' | 'check' | 'discover';

/** The result each operation answers with. */
export interface OperationResults {
  spec: ConnectorSpecification;
  check: ConnectionStatus;
  discover: AirbyteCatalog;
}

export type OperationOutcome<O extends ConnectorOperation = ConnectorOperation> =
  | { ok: true; operation: O; result: OperationResults[O]; logs: string[] }
  | {
      ok: false;
      operation: O;
      /** For people: the connector's TRACE error if it sent one, else what went wrong. */
      error: string;
      trace?: ErrorTrace;
      /** The connector's last log lines (LOG messages, non-protocol lines, stderr). */
      logs: string[];
    };

const EXPECTED = { spec: 'SPEC', check: 'CONNECTION_STATUS', discover: 'CATALOG' } as const;

/**
 * Turns the output of one `spec`, `check` or `discover` run into its outcome.
 * Feed it every parsed line (and stderr lines), then its exit. Strict: the
 * operation succeeds only with exit code 0, its result message and no TRACE
 * error; otherwise the error is the connector's TRACE message when it sent
 * one, and the last log lines go with it. One leniency: a `check` that
 * reports a config_error TRACE instead of a CONNECTION_STATUS (as several
 * SDKs do for a config they cannot even load) answered the check: FAILED,
 * with the trace's message.
 */
export class OperationOutcomeCollector<O extends ConnectorOperation> {
  private result: OperationResults[O] | undefined;
  private trace: ErrorTrace | undefined;
  private protocolError: string | undefined;
  private readonly logs: string[] = [];

  constructor(
    readonly operation: O,
    private readonly keepLogLines = 20,
  ) {}

  add(line: ParsedLine): void {
    switch (line.kind) {
      case 'message':
        return this.message(line.message);
      case 'non-protocol':
        return this.log(line.text);
      case 'error':
        this.protocolError ??= line.error.message;
        return this.log(line.error.message);
      case 'unknown':
        return;
    }
  }

  /** A line the connector wrote to stderr. */
  addStderr(text: string): void {
    this.log(text);
  }

  finish(exit: { code: number | null; signal?: string | null }): OperationOutcome<O> {
    const { operation } = this;
    const logs = [...this.logs];
    const fail = (what: string): OperationOutcome<O> => ({
      ok: false,
      operation,
      error: this.trace ? this.trace.message : what,
      ...(this.trace ? { trace: this.trace } : {}),
      logs,
    });
    const exited =
      exit.code === null ? `was killed by ${exit.signal ?? 'a signal'}` : `exited with code ${exit.code}`;
    if (operation === 'check' && !this.result && this.trace?.failure_type === 'config_error') {
      const status: ConnectionStatus = { status: 'FAILED', message: this.trace.message };
      return { ok: true, operation, result: status as OperationResults[O], logs };
    }
    if (exit.code !== 0) return fail(`the connector ${exited} without a TRACE error`);
    if (this.trace) return fail(this.trace.message);
    if (!this.result) {
      const why = this.protocolError ? ` (${this.protocolError})` : '';
      return fail(`the connector ${exited} without a ${EXPECTED[operation]} message${why}`);
    }
    return { ok: true, operation, result: this.result, logs };
  }

  private message(m: ConnectorMessage): void {
    if (m.type === 'LOG') {
      this.log(`${m.log.level} ${m.log.message}`);
    } else if (m.type === 'TRACE' && m.trace.type === 'ERROR' && m.trace.error) {
      // The first error is the cause; later ones are usually its consequences.
      this.trace ??= m.trace.error;
    } else if (m.type === EXPECTED[this.operation]) {
      const result =
        m.type === 'SPEC'
          ? m.spec
          : m.type === 'CONNECTION_STATUS'
            ? m.connectionStatus
            : m.type === 'CATALOG'
              ? m.catalog
              : undefined;
      this.result = result as OperationResults[O];
    }
  }

  private log(text: string): void {
    this.logs.push(text);
    if (this.logs.length > this.keepLogLines) this.logs.shift();
  }
}
