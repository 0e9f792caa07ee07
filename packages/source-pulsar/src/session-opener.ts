import {
  backoffDelay,
  ThalwegError,
  type BackoffPolicy,
  type Cancel,
  type Scheduler,
} from '@thalweg/connector-core';
import { describeError } from './errors.js';
import type { PulsarMessage, SessionClosed, SessionEvents } from './pulsar-port.js';

/** What the opener keeps on a partition's lane: which session is current, and the backoff. */
export interface SessionSlot {
  /** The partition's session topic (`…-partition-N`), for the log. */
  readonly topic: string;
  /** Moves on with each session opened or ended: events of an older one are dropped. */
  generation: number;
  attempts: number;
  cancelReopen: Cancel | undefined;
}

export interface SessionOpenerOptions<L extends SessionSlot, S> {
  readonly scheduler: Scheduler;
  readonly reconnect: BackoffPolicy;
  readonly log: (line: string) => void;
  /** 'subscribing' or 'reading', for the log line of a failed open. */
  readonly verb: string;
  /** True once the source is closing: nothing is opened or handed on after. */
  readonly closing: () => boolean;
  /** A configuration error (an unknown topic): the source stops instead of retrying. */
  readonly fail: (error: unknown) => void;
  /** Asks the port for the lane's session. */
  readonly connect: (lane: L, events: SessionEvents) => Promise<S>;
  /** The current session of `lane` delivered `message`. */
  readonly message: (lane: L, message: PulsarMessage) => void;
  /** The current session of `lane` ended (the source decides what then, e.g. `reopenLater`). */
  readonly closed: (lane: L, why: SessionClosed) => void;
  /** A session opened and is now the lane's current one. */
  readonly opened: (lane: L, session: S) => void;
}

/**
 * Opens a partition's session, and opens it again after a backoff: the one
 * reconnect of both Pulsar sources. Only the lane's current session speaks:
 * its events are handed on while its generation is the lane's, a session
 * that opens after the lane moved on (or the source began closing) is
 * closed unused, and a failed open is logged and tried again, except a
 * configuration error, which stops the source.
 */
export class SessionOpener<L extends SessionSlot, S extends { close(): Promise<void> }> {
  constructor(private readonly options: SessionOpenerOptions<L, S>) {}

  async open(lane: L): Promise<void> {
    const o = this.options;
    lane.cancelReopen = undefined;
    const generation = ++lane.generation;
    const current = (): boolean => lane.generation === generation && !o.closing();
    let session: S;
    try {
      session = await o.connect(lane, {
        message: (m) => {
          if (current()) o.message(lane, m);
        },
        closed: (why) => {
          if (current()) o.closed(lane, why);
        },
      });
    } catch (error) {
      if (!current()) return;
      if (error instanceof ThalwegError && error.errorClass === 'fatal-config') {
        o.fail(error);
        return;
      }
      o.log(
        `thalweg source-pulsar: ${o.verb} ${lane.topic} failed: ${describeError(error)}; trying again`,
      );
      this.reopenLater(lane);
      return;
    }
    if (!current()) {
      await session.close().catch(() => undefined);
      return;
    }
    lane.attempts = 0;
    o.opened(lane, session);
  }

  /** Opens `lane` again after the next backoff delay. */
  reopenLater(lane: L): void {
    lane.attempts += 1;
    const delay = backoffDelay(this.options.reconnect, lane.attempts);
    lane.cancelReopen = this.options.scheduler.after(delay, () => this.open(lane));
  }
}

/** Ends every lane's session and its pending reopen, then closes the port: both sources' close. */
export async function closeLanes(
  lanes: Iterable<SessionSlot & { session: { close(): Promise<void> } | null }>,
  port: { close(): Promise<void> },
): Promise<void> {
  const sessions: { close(): Promise<void> }[] = [];
  for (const lane of lanes) {
    lane.cancelReopen?.();
    lane.generation += 1;
    if (lane.session !== null) sessions.push(lane.session);
    lane.session = null;
  }
  await Promise.allSettled(sessions.map((s) => s.close()));
  await port.close();
}
