/**
 * The error base every thalweg package builds on. A code is stable and
 * machine-matched (`TWG_...`); the class decides what a caller does next:
 *
 * - `transient`    retry in place, on the same stream or connection;
 * - `poison`       tear the stream down and rebuild it within a bounded budget;
 * - `fatal-config` fail loud: no retry can fix it.
 */
export type ErrorClass = 'transient' | 'poison' | 'fatal-config';

export const CORE_ERROR_CODES = [
  'TWG_CONFIG_INVALID',
  'TWG_SPAN_INVALID',
  'TWG_SINK_ID_INVALID',
  'TWG_RECORD_ID_INPUT_INVALID',
  'TWG_ROLE_REFUSED',
  'TWG_POSITION_INVALID',
  'TWG_SINK_TRANSIENT',
  'TWG_SINK_POISON',
  'TWG_SINK_FATAL_CONFIG',
  'TWG_DELIVERY_ENDED',
  'TWG_DELIVERY_OUT_OF_ORDER',
  'TWG_RECORD_INVALID',
] as const;

export type CoreErrorCode = (typeof CORE_ERROR_CODES)[number];

/**
 * What a failure of a sink's `submit` took out of service: `sink` (the
 * default) when the sink, its stream or its connection failed and refuses
 * what follows; `batch` when it refused that one batch and takes the next
 * (the caller sets the batch aside: `setAsideOf`, confirm.ts).
 */
export type ErrorScope = 'batch' | 'sink';

export interface ThalwegErrorOptions<C extends string> {
  readonly code: C;
  readonly errorClass: ErrorClass;
  readonly message: string;
  readonly cause?: unknown;
  readonly scope?: ErrorScope;
}

export class ThalwegError<C extends string = string> extends Error {
  readonly code: C;
  readonly errorClass: ErrorClass;
  readonly scope: ErrorScope;

  constructor(options: ThalwegErrorOptions<C>) {
    super(
      `${options.code}: ${options.message}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = new.target.name;
    this.code = options.code;
    this.errorClass = options.errorClass;
    this.scope = options.scope ?? 'sink';
  }

  /** True when retrying the same operation in place may succeed. */
  get canRetry(): boolean {
    return this.errorClass === 'transient';
  }
}

/** Invalid input to a core function: names the field and the reason. */
export class InvalidInputError extends ThalwegError<CoreErrorCode> {
  readonly field: string;

  constructor(code: CoreErrorCode, field: string, reason: string) {
    super({ code, errorClass: 'fatal-config', message: `${field}: ${reason}` });
    this.field = field;
  }
}

/**
 * A configuration or topology refused at the edge. `path` is the dotted path
 * of the offending field (`sinks.raw.durability`), `reason` why it is refused.
 */
export class ConfigError extends ThalwegError<'TWG_CONFIG_INVALID' | 'TWG_ROLE_REFUSED'> {
  readonly path: string;
  readonly reason: string;

  constructor(
    path: string,
    reason: string,
    code: 'TWG_CONFIG_INVALID' | 'TWG_ROLE_REFUSED' = 'TWG_CONFIG_INVALID',
  ) {
    super({ code, errorClass: 'fatal-config', message: `${path || '(root)'}: ${reason}` });
    this.path = path;
    this.reason = reason;
  }
}

/**
 * A misuse of the delivery layer (connector-core/src/delivery): a submit after
 * the lane was ended, or a settlement that would confirm out of order. Both
 * are defects of the sink driving the lane, never of the data.
 */
export class DeliveryError extends ThalwegError<
  'TWG_DELIVERY_ENDED' | 'TWG_DELIVERY_OUT_OF_ORDER'
> {
  constructor(code: 'TWG_DELIVERY_ENDED' | 'TWG_DELIVERY_OUT_OF_ORDER', message: string) {
    super({ code, errorClass: 'fatal-config', message });
  }
}
