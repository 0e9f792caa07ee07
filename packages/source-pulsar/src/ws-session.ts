import WebSocket, { type RawData } from 'ws';
import { PulsarSourceError } from './errors.js';
import type { PulsarMessage, SessionEvents } from './pulsar-port.js';
import { MalformedFrame, parseFrame } from './ws-message.js';

function decodeEntities(text: string): string {
  return text
    .replaceAll('&quot;', '"')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

/** Jetty's error page puts the reason in its title: `Error 404 Failed to create …`. */
function refusalReason(body: string): string {
  const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1];
  return decodeEntities(title ?? body).slice(0, 500);
}

/** The part of a net socket a burst of sends needs. */
interface Wire {
  cork(): void;
  uncork(): void;
}

/**
 * The connection `ws` writes to. `ws` keeps it in `_socket`, not a public
 * field but the same since ws 1 (its Sender corks it for each frame); a
 * version without it only loses the coalescing, and a test says so.
 */
export function wireOf(socket: WebSocket): Wire | null {
  const wire = (socket as unknown as { _socket?: Partial<Wire> | null })._socket;
  return typeof wire?.cork === 'function' && typeof wire.uncork === 'function'
    ? (wire as Wire)
    : null;
}

/** An open socket, and the frames it received before anyone listened. */
export interface OpenSocket {
  readonly socket: WebSocket;
  /** Stops keeping frames and returns those kept. */
  takeEarly(): EarlyFrame[];
}

export interface EarlyFrame {
  readonly data: RawData;
  readonly isBinary: boolean;
}

/**
 * Opens `url` within `timeoutMs`, offering compression only when asked. An upgrade the broker answers with 404
 * (no such namespace or tenant) is TWG_PULSAR_TOPIC_UNKNOWN naming `topic`;
 * any other refusal, a refused connection or the deadline is
 * TWG_PULSAR_BROKER_UNREACHABLE with the URL and what the broker said.
 */
export function openSocket(
  url: string,
  topic: string,
  timeoutMs: number,
  perMessageDeflate: boolean,
): Promise<OpenSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate });
    let settled = false;
    const settle = (error: PulsarSourceError | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === null) {
        // Frames may come before the session is built (a reader sends at
        // once): they are kept for it, in order.
        const early: EarlyFrame[] = [];
        const keep = (data: RawData, isBinary: boolean): void => {
          early.push({ data, isBinary });
        };
        socket.on('message', keep);
        resolve({
          socket,
          takeEarly: () => {
            socket.off('message', keep);
            return early;
          },
        });
        return;
      }
      socket.removeAllListeners();
      // A late 'error' of the abandoned socket must not become an uncaught exception.
      socket.on('error', () => undefined);
      socket.terminate();
      reject(error);
    };
    const timer = setTimeout(() => {
      settle(
        new PulsarSourceError(
          'TWG_PULSAR_BROKER_UNREACHABLE',
          `the Pulsar WebSocket API at ${url} did not open a session within ${String(timeoutMs)} ms (connectTimeoutMs)`,
        ),
      );
    }, timeoutMs);
    socket.once('open', () => {
      settle(null);
    });
    socket.once('error', (cause) => {
      settle(
        new PulsarSourceError(
          'TWG_PULSAR_BROKER_UNREACHABLE',
          `could not reach the Pulsar WebSocket API at ${url}: ${cause.message}`,
          { cause },
        ),
      );
    });
    socket.once('unexpected-response', (request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      const done = (): void => {
        const status = response.statusCode ?? 0;
        const why = refusalReason(body);
        request.destroy();
        settle(
          status === 404
            ? new PulsarSourceError(
                'TWG_PULSAR_TOPIC_UNKNOWN',
                `the broker refused a session on ${topic}: HTTP 404 ${why}`,
              )
            : new PulsarSourceError(
                'TWG_PULSAR_BROKER_UNREACHABLE',
                `the Pulsar WebSocket API refused ${url}: HTTP ${String(status)} ${why}`,
              ),
        );
      };
      response.on('end', done);
      response.on('error', done);
    });
  });
}

/**
 * One open consumer or reader socket: hands each message on, sends frames
 * only while open (afterwards they are dropped, never thrown), and reports
 * `closed` exactly once — on the socket's close, on its 'error', on a frame
 * it cannot read, or on `close()`. Ids sent back must be ones this session
 * delivered and has not settled (`outstanding`): an id the broker cannot
 * decode closes the whole session (1011), and one from another session is
 * not ours to acknowledge.
 */
export class WsSession {
  private readonly outstanding = new Set<string>();
  private ended = false;
  private readonly gone: Promise<void>;
  private readonly keepalive: ReturnType<typeof setInterval>;
  private awaitingPong = false;
  private readonly socket: WebSocket;
  /** The connection under the WebSocket, corked while a burst of frames is sent (see `transmit`). */
  private readonly wire: Wire | null;
  private corked = false;

  /**
   * Pings every `pingIntervalMs`: the traffic keeps a quiet session (a
   * paused partition gets no frames) from the broker's idle timeout, and a
   * ping still unanswered at the next one ends the session, so a connection
   * that died without a close is noticed. Messages start on the next turn
   * of the event loop, so the caller holds the session before the first.
   */
  constructor(
    opened: OpenSocket,
    private readonly events: SessionEvents,
    readonly description: string,
    private readonly log: (line: string) => void,
    private readonly onEnd: (session: WsSession) => void,
    pingIntervalMs: number,
  ) {
    const socket = opened.socket;
    this.socket = socket;
    this.wire = wireOf(socket);
    this.keepalive = setInterval(() => {
      if (this.awaitingPong) {
        this.end(null, `no pong within ${String(pingIntervalMs)} ms (pingIntervalMs)`);
        socket.terminate();
        return;
      }
      this.awaitingPong = true;
      socket.ping();
    }, pingIntervalMs);
    this.keepalive.unref();
    socket.on('pong', () => {
      this.awaitingPong = false;
    });
    this.gone =
      socket.readyState === WebSocket.CLOSED
        ? Promise.resolve()
        : new Promise((resolve) => {
            socket.once('close', () => {
              resolve();
            });
          });
    const text = (data: RawData, isBinary: boolean): string | null =>
      isBinary || !Buffer.isBuffer(data) ? null : data.toString('utf8');
    setImmediate(() => {
      // Until now the frames were kept (in order); from now on they are handed on.
      for (const early of opened.takeEarly()) this.receive(text(early.data, early.isBinary));
      socket.on('message', (data, isBinary) => {
        this.receive(text(data, isBinary));
      });
    });
    socket.on('close', (code, reason) => {
      this.end(code, reason.toString('utf8') || 'closed by the broker');
    });
    socket.on('error', (cause) => {
      this.end(null, `socket error: ${cause.message}`);
    });
    if (socket.readyState === WebSocket.CLOSED) {
      setImmediate(() => {
        this.end(null, 'the socket closed before the session started');
      });
    }
  }

  /** Sends `frame` about `messageId` if the session is open and delivered that id; `settles` forgets it. */
  sendAbout(verb: string, messageId: string, frame: string, settles: boolean): void {
    if (this.ended) return;
    if (!this.outstanding.has(messageId)) {
      throw new PulsarSourceError(
        'TWG_PULSAR_MISUSE',
        `${verb} of message ${messageId} on ${this.description}: this session did not deliver it, or it was already settled`,
      );
    }
    if (settles) this.outstanding.delete(messageId);
    this.transmit(frame);
  }

  send(frame: string): void {
    if (!this.ended) this.transmit(frame);
  }

  /**
   * Sends one frame. The first frame of a synchronous burst corks the
   * connection and the next tick uncorks it, so a commit's acknowledgements
   * (one frame per message: the WebSocket API has no cumulative ack) leave
   * in one write instead of one system call each.
   */
  private transmit(frame: string): void {
    const wire = this.wire;
    if (wire !== null && !this.corked) {
      this.corked = true;
      wire.cork();
      process.nextTick(() => {
        this.corked = false;
        wire.uncork();
      });
    }
    this.socket.send(frame);
  }

  /** Closes the socket (normal closure) and resolves once it is closed; `closed` reports 1000. */
  async close(): Promise<void> {
    if (this.socket.readyState !== WebSocket.CLOSED)
      this.socket.close(1000, 'closed by the client');
    this.end(1000, 'closed by the client');
    await this.gone;
  }

  private receive(text: string | null): void {
    if (this.ended) return;
    let message: PulsarMessage;
    try {
      if (text === null) throw new MalformedFrame('a binary frame');
      const frame = parseFrame(text);
      if (frame.kind === 'other') {
        this.log(
          `pulsar: ${this.description} sent a frame that is not a message: ${frame.text.slice(0, 200)}`,
        );
        return;
      }
      message = frame.message;
    } catch (cause) {
      this.fail(`the broker sent a frame that cannot be read: ${(cause as Error).message}`);
      return;
    }
    this.outstanding.add(message.messageId);
    try {
      this.events.message(message);
    } catch (cause) {
      this.fail(
        `the message handler threw: ${cause instanceof Error ? cause.message : String(cause)}`,
      );
    }
  }

  /** Ends the session from this side: what it delivered and did not settle is redelivered to the next. */
  private fail(detail: string): void {
    if (this.ended) return;
    this.socket.close(1011, 'the client ended the session');
    this.end(null, detail);
  }

  private end(code: number | null, detail: string): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepalive);
    this.outstanding.clear();
    this.onEnd(this);
    this.log(
      `pulsar: ${this.description} closed (${code === null ? 'no code' : String(code)}: ${detail})`,
    );
    try {
      this.events.closed({ code, detail });
    } catch (cause) {
      // Called from a socket event: a throw here would be an uncaught exception.
      this.log(
        `pulsar: the closed handler of ${this.description} threw: ${cause instanceof Error ? cause.message : String(cause)}`,
      );
    }
  }
}
