/**
 * One queue system under test. Each gets its own database on the shared
 * PostgreSQL; the harness calls the methods in this order for every
 * measurement: enqueue → drain (throughput), or latency on an empty queue.
 */
export interface QueueSystem {
  /** Shown in tables, e.g. `sluice (limit 1)`. */
  readonly name: string;
  /** The settings this system runs with, recorded in the results JSON. */
  readonly settings: Record<string, unknown>;
  /** Installs the schema (migrations) in the system's database. */
  setup(): Promise<void>;
  /** Queues `count` no-op jobs as fast as the system allows (not timed), then VACUUM ANALYZE. */
  enqueue(count: number): Promise<void>;
  /** Works the queue empty with `workers` concurrent workers; resolves the seconds it took. */
  drain(count: number, workers: number): Promise<number>;
  /**
   * Enqueues one job every 1000/`ratePerSecond` ms for `seconds` while
   * `workers` wait for work; resolves each job's enqueue → handler-start latency in ms.
   */
  latency(ratePerSecond: number, seconds: number, workers: number): Promise<number[]>;
  /** Closes whatever setup opened. */
  close(): Promise<void>;
}
