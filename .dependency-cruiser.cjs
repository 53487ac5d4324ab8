/**
 * The dependency rules of docs/architecture.md, checked by `npm run check:deps` (part of `npm test`).
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules load one way: a cycle of runtime imports makes load order fragile. Cycles through a type-only ' +
        'import (the store and its prepared statements) or a lazy import() (a CLI command and its action) do not load in a cycle.',
      from: {},
      to: {
        circular: true,
        dependencyTypesNot: ['type-only', 'type-import', 'dynamic-import'],
        viaOnly: { dependencyTypesNot: ['type-only', 'type-import', 'dynamic-import'] },
      },
    },
    {
      name: 'simulator-engine-no-type-circle',
      severity: 'error',
      comment:
        'Inside the simulator engine even a type-only cycle is refused: two families that name each other’s types ' +
        'cannot be read, moved or split one at a time. Share a types file both import, or pass a narrow interface.',
      from: { path: '^simulator/engine/' },
      to: { path: '^simulator/engine/', circular: true },
    },
    {
      name: 'routes-not-to-store',
      severity: 'error',
      comment: 'A route parses, calls a domain module and responds; reading or writing the store is the domain’s job.',
      from: { path: '^server/routes/' },
      to: { path: '^server/db/' },
    },
    {
      name: 'domain-not-to-http',
      severity: 'error',
      comment: 'Domain modules return data and throw ApiError; requests, responses and middleware belong to server/http/ and the routes.',
      from: { path: ['^server/(accounts|checkout|payments|disputes|payouts|terminal|webhooks|idempotency|processor|db|audit)/', '^server/(pagination|services)[.]ts$'] },
      to: { path: '^server/(http|routes)/' },
    },
    {
      name: 'stripe-only-in-processor',
      severity: 'error',
      comment:
        'The stripe package is the processor ports’ implementation: only the adapter (server/processor/stripe/) names its types; ' +
        'the rest of the product reads pos’s snapshots (server/processor/snapshots.ts).',
      from: { path: '^(server|cli|agent|shared)/', pathNot: '^server/processor/stripe/' },
      to: { path: '^node_modules/stripe/' },
    },
    {
      name: 'domain-through-the-port',
      severity: 'error',
      comment:
        'The domain calls the processor through its narrow ports (server/processor/port.ts); which implementation ' +
        'runs is chosen by server/main.ts (the stripe adapter) or a unit test (the in-memory fake).',
      from: { path: '^server/', pathNot: ['^server/processor/stripe/', '^server/main[.]ts$', '[.]test[.]ts$'] },
      to: { path: ['^server/processor/stripe/', '^server/processor/fake[.]ts$'] },
    },
    {
      name: 'fake-only-in-tests',
      severity: 'error',
      comment: 'The in-memory processor is for unit tests; the product runs on the stripe package, against Stripe or the simulator.',
      from: { pathNot: ['[.]test[.]ts$', '^test/'] },
      to: { path: '^server/processor/fake[.]ts$' },
    },
    {
      name: 'server-not-to-simulator',
      severity: 'error',
      comment: 'The server reaches the simulator over HTTP, as it would reach Stripe, never by importing it.',
      from: { path: '^server/' },
      to: { path: '^simulator/' },
    },
    {
      name: 'shared-and-agent-not-to-server-or-simulator',
      severity: 'error',
      comment:
        'shared/ is the ground floor every part imports downward (the wire contract is shared/contract/), and the agent ' +
        'reaches the server over HTTP and its websocket: neither imports the server or the simulator. Tests may start them.',
      from: { path: '^(shared|agent)/', pathNot: '[.]test[.]tsx?$' },
      to: { path: '^(server|simulator)/' },
    },
    {
      name: 'cli-not-to-server',
      severity: 'error',
      comment:
        'The CLI talks to the server through the /v1 client; only the commands that run the server in their own process ' +
        '(`pos server` and `pos up` through cli/stack.ts, `pos admin`, `pos migrate`, `pos backup` and `pos restore` on the data directory) import it. Tests may start it.',
      from: {
        path: '^cli/',
        pathNot: ['^cli/commands/(server|up|admin|rotate-key|migrate|backup)-action[.]ts$', '^cli/stack[.]ts$', '[.]test[.]tsx?$'],
      },
      to: { path: '^server/' },
    },
    {
      name: 'stack-only-in-server-commands',
      severity: 'error',
      comment: 'cli/stack.ts loads the whole server: only `pos server` and `pos up` load it (a type-only import loads nothing).',
      from: { path: '^cli/', pathNot: ['^cli/commands/(server|up)-action[.]ts$', '[.]test[.]tsx?$'] },
      to: { path: '^cli/stack[.]ts$', dependencyTypesNot: ['type-only', 'type-import'] },
    },
    {
      name: 'ink-only-in-tui',
      severity: 'error',
      comment: 'Ink and React load only for the interactive UI, when stdout is a TTY; everything else stays plain Node.',
      from: { pathNot: '^cli/tui/' },
      to: { path: '^node_modules/(ink|ink-testing-library|react|react-reconciler)/' },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
