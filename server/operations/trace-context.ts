import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

/**
 * The active trace context held only for a synchronous call: a span started inside `with(ctx, fn)`
 * while `fn` runs (not after its first `await`) takes `ctx` as its parent. Nothing follows promises,
 * so nothing costs anything per promise: AsyncLocalStorage on Node 20 turns on promise hooks for
 * every promise in the process, which was half of tracing's cost on a create. Work that crosses an
 * async boundary carries its context explicitly and enters it again there: the request's context
 * travels on its scope (`Scope.trace`) into the idempotency engine, which enters it around each
 * step and unit of work; every processor call takes the scope's trace with its mode (port.ts
 * `ProcessorScope`) and its span's parent from the `traceparent` it sends.
 */
export class SyncContextManager implements ContextManager {
  #active: Context = ROOT_CONTEXT;

  active(): Context {
    return this.#active;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.#active;
    this.#active = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#active = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, fn, this, ...args);
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#active = ROOT_CONTEXT;
    return this;
  }
}
