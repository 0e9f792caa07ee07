import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { IpcStreamSourceError } from './errors.js';
import type { IpcStreamConnection } from './options.js';

/** Where a resumable connection asks to start: the stream (empty for a new one) and the next row. */
export interface ResumeAt {
  readonly stream: string;
  readonly next: number;
}

/** An open connection: its IPC bytes, and for a resumed one what the producer answered. */
export interface OpenedStream {
  readonly readable: Readable;
  /** The producer's answer; absent for a stream that does not resume. */
  readonly answer: { readonly stream: string; readonly first: number } | undefined;
  close(): void;
}

/** The longest answer line read: a handshake line is a few dozen bytes. */
const MAX_LINE_BYTES = 64 * 1024;

/**
 * Opens the connection and, with `resume`, speaks the handshake of
 * stream-spec.md: over a socket one JSON line each way before the IPC
 * bytes, over HTTP the `Thalweg-*` headers. A producer that no longer holds
 * `next` (an `{"error":..}` line, HTTP 410) is TWG_IPC_STREAM_RESUME_REFUSED.
 */
export async function openStream(
  connection: IpcStreamConnection,
  resume: ResumeAt | undefined,
): Promise<OpenedStream> {
  switch (connection.kind) {
    case 'readable':
      return { readable: connection.readable, answer: undefined, close: () => undefined };
    case 'http':
      return openHttp(connection.url, connection.headers ?? {}, resume);
    case 'tcp':
    case 'unix': {
      const socket = await connected(
        connection.kind === 'tcp'
          ? connect({ host: connection.host, port: connection.port })
          : connect({ path: connection.path }),
      );
      const close = () => {
        socket.destroy();
      };
      if (resume === undefined) return { readable: socket, answer: undefined, close };
      try {
        socket.write(
          `${JSON.stringify({ thalweg: 'resume', stream: resume.stream, next: resume.next })}\n`,
        );
        const answer = parseAnswer(await readLine(socket), resume);
        return { readable: socket, answer, close };
      } catch (error) {
        close();
        throw error;
      }
    }
  }
}

function connected(socket: Socket): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const failed = (cause: Error) => {
      reject(connectFailed(cause.message, cause));
    };
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.off('error', failed);
      resolve(socket);
    });
  });
}

/** One line from the socket; the bytes after it are put back for the IPC reader. */
function readLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let length = 0;
    const done = (error: Error | undefined, line?: string) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('error', onError);
      socket.pause();
      if (error === undefined) resolve(line ?? '');
      else reject(error);
    };
    const onData = (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      if (nl < 0) {
        parts.push(chunk);
        length += chunk.byteLength;
        if (length > MAX_LINE_BYTES) {
          done(handshakeInvalid(`no end of line in the first ${length} bytes of the answer`));
        }
        return;
      }
      parts.push(chunk.subarray(0, nl));
      const rest = chunk.subarray(nl + 1);
      done(undefined, Buffer.concat(parts).toString('utf8'));
      if (rest.byteLength > 0) socket.unshift(rest);
    };
    const onEnd = () => {
      done(connectFailed('the producer closed the connection before its answer line'));
    };
    const onError = (cause: Error) => {
      done(connectFailed(cause.message, cause));
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('error', onError);
  });
}

/** The answer line of stream-spec.md: `{"stream","first"}` or `{"error"}`. */
export function parseAnswer(line: string, resume: ResumeAt): { stream: string; first: number } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (cause) {
    throw handshakeInvalid(`the answer is not JSON: ${JSON.stringify(line.slice(0, 200))}`, cause);
  }
  const answer = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const error = answer['error'];
  if (typeof error === 'string') throw refused(error, resume);
  const stream = answer['stream'];
  const first = answer['first'];
  if (
    typeof stream !== 'string' ||
    typeof first !== 'number' ||
    !Number.isSafeInteger(first) ||
    first < 0
  ) {
    throw handshakeInvalid(
      `the answer ${JSON.stringify(line.slice(0, 200))} has no "stream" and "first"`,
    );
  }
  return { stream, first };
}

async function openHttp(
  url: string,
  headers: Record<string, string>,
  resume: ResumeAt | undefined,
): Promise<OpenedStream> {
  const sent: Record<string, string> = { ...headers };
  if (resume !== undefined) {
    sent['thalweg-resume-next'] = String(resume.next);
    if (resume.stream.length > 0) sent['thalweg-stream'] = resume.stream;
  }
  const request = (url.startsWith('https:') ? httpsRequest : httpRequest)(url, { headers: sent });
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', (cause) => {
      reject(connectFailed(cause.message, cause));
    });
    request.end();
  });
  const close = () => {
    request.destroy();
  };
  const status = response.statusCode ?? 0;
  if (status !== 200) {
    close();
    if (status === 410 && resume !== undefined) throw refused('HTTP 410 Gone', resume);
    throw connectFailed(`HTTP ${status} ${response.statusMessage ?? ''}`.trim());
  }
  if (resume === undefined) return { readable: response, answer: undefined, close };
  const stream = response.headers['thalweg-stream'];
  const first = Number(response.headers['thalweg-first-offset']);
  if (typeof stream !== 'string' || !Number.isSafeInteger(first) || first < 0) {
    close();
    throw handshakeInvalid('the response has no Thalweg-Stream and Thalweg-First-Offset headers');
  }
  return { readable: response, answer: { stream, first }, close };
}

function refused(reason: string, resume: ResumeAt): IpcStreamSourceError {
  return new IpcStreamSourceError(
    'TWG_IPC_STREAM_RESUME_REFUSED',
    `the producer cannot resume stream ${JSON.stringify(resume.stream)} at row ${resume.next} (${reason}): the rows from there on are lost to this source`,
  );
}

function handshakeInvalid(reason: string, cause?: unknown): IpcStreamSourceError {
  return new IpcStreamSourceError('TWG_IPC_STREAM_HANDSHAKE_INVALID', reason, {}, cause);
}

function connectFailed(reason: string, cause?: unknown): IpcStreamSourceError {
  return new IpcStreamSourceError('TWG_IPC_STREAM_CONNECT_FAILED', reason, {}, cause);
}
