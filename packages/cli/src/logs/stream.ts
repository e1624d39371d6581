import { LogLineView, LogPage } from '@sluice/api-schemas';
import type { z } from 'zod';
import { parseBody, type ApiClient } from '../client';
import type { Io } from '../io';

export type LogLine = z.output<typeof LogLineView>;

/**
 * A line as people read it: what the task wrote (stdout and stderr) on
 * stdout, Sluice's own notes (`system`: task started, exit code) on stderr.
 */
export function printLine(io: Io, line: LogLine): void {
  if (line.stream === 'system') io.err(`[sluice] ${line.line}\n`);
  else io.out(`${line.line}\n`);
}

/**
 * Every line of a task run: with `follow`, the server's newline-delimited JSON
 * stream, which ends once the task run has ended and every line was sent;
 * without, the pages there are now.
 */
export async function eachLogLine(
  client: ApiClient,
  taskRunId: string,
  follow: boolean,
  onLine: (line: LogLine) => void,
): Promise<void> {
  const path = `/task-runs/${encodeURIComponent(taskRunId)}/logs`;
  if (!follow) {
    let after = 0;
    for (;;) {
      const page = await client.json('GET', path, LogPage, { query: { after, limit: 1000 } });
      for (const line of page.lines) onLine(line);
      if (page.lines.length === 0 || page.next === after) return;
      after = page.next;
    }
  }
  const res = await client.send('GET', path, { query: { follow: 'true' } });
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffered = '';
  const emit = (text: string) => {
    if (text.trim() !== '') onLine(parseBody(LogLineView, JSON.parse(text), `GET ${path}?follow=true`));
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      emit(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
    }
  }
  emit(buffered + decoder.decode());
}
