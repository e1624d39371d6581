/** Something started that must be stopped on shutdown. */
export type Stopper = () => Promise<void> | void;

/**
 * What a process started, stopped in reverse order (last started, first
 * stopped). A failing stopper is logged and the rest still run, so one stuck
 * part never keeps the others — a database pool, a port — open.
 */
export class StopStack {
  private readonly stoppers: Stopper[] = [];

  constructor(private readonly log: { error(message: string, fields?: Record<string, unknown>): void }) {}

  push(stopper: Stopper): void {
    this.stoppers.push(stopper);
  }

  async stopAll(): Promise<void> {
    for (const stop of this.stoppers.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        this.log.error('error while stopping', { error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}
