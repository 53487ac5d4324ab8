import type { IncomingMessage, ServerResponse } from 'node:http';
import { context, SpanStatusCode, type Attributes, type Context, type Span, type SpanKind, type Tracer } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { noMetrics, type Metrics } from './metrics.js';

/**
 * Metrics and traces with the OpenTelemetry SDK, one `Telemetry` per server (tests run several in
 * one process, so nothing is registered as the global meter or tracer provider): the instruments
 * (`metrics`), a tracer when traces are exported, the Prometheus text when it is served, and the
 * shutdown that flushes what is still buffered. docs/operations.md says what is recorded.
 */
export interface Telemetry {
  readonly metrics: Metrics;
  /** Set only when spans go somewhere (OTLP): otherwise no span is made at all. */
  readonly tracer: Tracer | undefined;
  /** Writes the Prometheus text of the current metrics; undefined when no listener serves it. */
  readonly prometheus: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  /** Sends what is buffered (spans, metrics) now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Nothing recorded, nothing served: unit tests and POS_TELEMETRY=off. */
export const noTelemetry: Telemetry = {
  metrics: noMetrics,
  tracer: undefined,
  prometheus: undefined,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/**
 * Runs `work` inside a span of `tracer`, ending it when the work ends and marking it failed when it
 * throws; with no tracer it only runs the work. The span's parent is `parent` when given, else the
 * active context, which lasts only for the synchronous call (trace-context.ts): work that goes on
 * after an `await` passes the span's context on itself.
 *
 * `leaf`: nothing the work does opens a span of its own (a database unit, a processor call), so
 * the span is not made the active one while the work starts.
 */
export function traced<T>(
  tracer: Tracer | undefined,
  name: string,
  work: (span: Span | undefined) => Promise<T>,
  options: { kind?: SpanKind; attributes?: Attributes; leaf?: boolean; parent?: Context | undefined } = {},
): Promise<T> {
  if (!tracer) return started(work, undefined);
  const { leaf, parent, ...spanOptions } = options;
  if (leaf) return settled(tracer.startSpan(name, spanOptions, parent), work);
  return tracer.startActiveSpan(name, spanOptions, parent ?? context.active(), (span) => settled(span, work));
}

/** The work's promise, ending `span` when it settles: one `then`, rather than an async wrapper's promises. */
function settled<T>(span: Span, work: (span: Span | undefined) => Promise<T>): Promise<T> {
  const failed = (err: unknown): never => {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    throw err;
  };
  return started(work, span).then((result) => {
    span.end();
    return result;
  }, failed);
}

/** The work's promise; one that throws before it has a promise is a rejected one, as in an async function. */
function started<T>(work: (span: Span | undefined) => Promise<T>, span: Span | undefined): Promise<T> {
  try {
    return work(span);
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

/**
 * `work` started in `trace`: a span its synchronous part opens (a processor call, a unit of work)
 * takes it as parent. The explicit re-entry at an async boundary that AsyncLocalStorage would have
 * made for us (trace-context.ts); with no context (traces off) it only runs the work.
 */
export function inTrace<T>(trace: Context | undefined, work: () => T): T {
  return trace ? context.with(trace, work) : work();
}

/**
 * A body parser whose `next` runs in the request's trace context: it calls `next` from the body
 * stream's `end` event, outside the request's call, so a span started synchronously by what follows
 * would start a trace of its own. Work after an `await` takes the context from its scope instead.
 */
export function inRequestContext(parse: RequestHandler): RequestHandler {
  return (req, res, next) => parse(req, res, context.bind(context.active(), next));
}
