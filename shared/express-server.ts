import { createServer, IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/** Node's http constructors are plain functions (lib/_http_incoming.js, lib/_http_server.js), callable on an object. */
type NodeConstructor<A extends unknown[]> = (this: object, ...args: A) => void;

/**
 * An HTTP server for an Express app whose requests and responses are made with the app's own
 * request and response prototypes from the start.
 *
 * Express's entry re-parents each request and response onto those prototypes
 * (`Object.setPrototypeOf`, express/lib/application.js `handle`). In V8 that costs far more than
 * the call: measured on this project's 2-core bench hosts, an Express hello world served this way
 * took a fifth of the CPU per request of the same app under `createServer(app)` and answered
 * 2.4–3× as many requests a second in the bench, and a payment read by id took about half the CPU.
 * Born with the right prototype, the object is left as it is: Express sets the prototype it
 * already has, which changes nothing.
 *
 * The objects are Node's own, made by Node's constructors called on them (as its own subclasses
 * did before classes), so `instanceof IncomingMessage` / `ServerResponse` and all Node does with
 * them hold as before. `Reflect.construct` with the app's constructor as `newTarget` would read
 * better but, measured, brought the whole cost back.
 */
export function expressServer(app: Express): Server {
  const Incoming = function (this: IncomingMessage, socket: Socket): void {
    (IncomingMessage as unknown as NodeConstructor<[Socket]>).call(this, socket);
  };
  Incoming.prototype = app.request;
  const Outgoing = function (this: ServerResponse, req: IncomingMessage, options?: unknown): void {
    (ServerResponse as unknown as NodeConstructor<[IncomingMessage, unknown]>).call(this, req, options);
  };
  Outgoing.prototype = app.response;
  return createServer(
    {
      IncomingMessage: Incoming as unknown as typeof IncomingMessage,
      ServerResponse: Outgoing as unknown as typeof ServerResponse,
    },
    app,
  );
}
