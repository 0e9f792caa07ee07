import { ThalwegError, type ErrorClass, type ErrorScope } from './errors.js';
import type { SinkId } from './sink-id.js';

export type SinkErrorCode = 'TWG_SINK_TRANSIENT' | 'TWG_SINK_POISON' | 'TWG_SINK_FATAL_CONFIG';

const CODE_OF: Record<ErrorClass, SinkErrorCode> = {
  transient: 'TWG_SINK_TRANSIENT',
  poison: 'TWG_SINK_POISON',
  'fatal-config': 'TWG_SINK_FATAL_CONFIG',
};

/**
 * A sink's failure, naming the sink. The class decides the caller's action:
 * retry in place, rebuild the stream (unconfirmed batches replay, nothing was
 * confirmed that is not durable), or stop and report the configuration.
 */
export class SinkError extends ThalwegError<SinkErrorCode> {
  readonly sink: SinkId;

  constructor(options: {
    readonly sink: SinkId;
    readonly errorClass: ErrorClass;
    readonly message: string;
    readonly cause?: unknown;
    /** `batch`: the sink refused that batch alone and takes the next (ErrorScope). */
    readonly scope?: ErrorScope;
  }) {
    super({
      code: CODE_OF[options.errorClass],
      errorClass: options.errorClass,
      message: `sink "${options.sink}": ${options.message}`,
      cause: options.cause,
      ...(options.scope === undefined ? {} : { scope: options.scope }),
    });
    this.sink = options.sink;
  }
}
