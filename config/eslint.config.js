// ESLint runs for what Biome can't do: promises nobody awaits (with full type information) and the
// layer rules. A daemon full of sockets, child processes and timers dies or hangs on a forgotten
// promise; layers kept by convention erode, so imports that cross them are errors.
import tseslint from 'typescript-eslint';

const APPS = ['@molf/server', '@molf/worker', '@molf/cli', '@molf/web'];

/** Deep imports into another package's files, and relative paths that leave the package. */
const NO_REACHING_IN = [
  { group: ['@molf/*/src', '@molf/*/src/**'], message: "Import a package's entry, never its files." },
  {
    regex: '^(\\.\\./)+(apps|packages)/',
    message: 'A relative path must not leave its package: import the other package by name.',
  },
];

/** `no-restricted-imports` with the given forbidden paths, always with the no-reaching-in patterns. */
function restrict(paths, patterns = []) {
  return {
    '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns: [...NO_REACHING_IN, ...patterns] }],
  };
}

const appsForbidden = (message, except = []) =>
  APPS.filter((name) => !except.includes(name)).flatMap((name) => [
    { name, message },
    ...(name === '@molf/server' ? [{ name: '@molf/server/router', message }] : []),
  ]);

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'config/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: new URL('..', import.meta.url).pathname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      ...restrict([]),
    },
  },
  // The layers (see docs/architecture.md). Packages never import apps — except the private e2e
  // package, whose tests start the apps together so that no app has to import another.
  {
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/e2e/**'],
    rules: restrict(appsForbidden('Packages never import apps: move the shared code into a package.')),
  },
  // The client may know the server only by its router type; its core runs in a browser too, so
  // Node-only modules belong to its Node entry (node.ts, and node/ beside it) and its tests.
  {
    files: ['packages/client/src/**/*.ts'],
    ignores: ['packages/client/src/node.ts', 'packages/client/src/node/**', 'packages/client/src/**/*.test.ts'],
    rules: restrict(
      [
        ...appsForbidden('The client knows the server only by its router type.', ['@molf/server']),
        {
          name: '@molf/server',
          message:
            "The client knows the server only by its router type: `import type { AppRouter } from '@molf/server/router'`.",
        },
        {
          name: '@molf/server/router',
          allowTypeImports: true,
          message: "Only the router's type: `import type { AppRouter } from '@molf/server/router'`.",
        },
        { name: 'ws', message: 'The client core runs in browsers: Node-only code goes in node.ts.' },
      ],
      [{ group: ['node:*'], message: 'The client core runs in browsers: Node-only code goes in node.ts.' }],
    ),
  },
  // The worker never imports the server (nor the CLI).
  {
    files: ['apps/worker/src/**/*.ts'],
    rules: restrict(
      appsForbidden('The worker never imports the server or the CLI; contracts live in @molf/protocol.', [
        '@molf/worker',
      ]),
    ),
  },
  // The server's own code imports no other app; its tests may start a real worker.
  {
    files: ['apps/server/src/**/*.ts'],
    ignores: ['apps/server/src/**/*.test.ts', 'apps/server/src/testing/**'],
    rules: restrict(appsForbidden('The server never imports another app.', ['@molf/server'])),
  },
  // The server's services know no sockets: TLS, pairing and a second instance touch only transport/.
  {
    files: ['apps/server/src/**/*.ts'],
    ignores: [
      'apps/server/src/transport/**',
      'apps/server/src/create-server.ts',
      'apps/server/src/index.ts',
      // The config file names what both build: services and transport.
      'apps/server/src/config/**',
      'apps/server/src/**/*.test.ts',
      'apps/server/src/testing/**',
    ],
    rules: restrict(
      [
        ...appsForbidden('The server never imports another app.', ['@molf/server']),
        { name: 'ws', message: 'Sockets belong to apps/server/src/transport.' },
        { name: 'node:http', allowTypeImports: true, message: 'Sockets belong to apps/server/src/transport.' },
        { name: '@trpc/server/adapters/ws', message: 'Sockets belong to apps/server/src/transport.' },
      ],
      [{ group: ['**/transport', '**/transport/**'], message: 'Services never import the transport.' }],
    ),
  },
  // The web client runs in browsers: it talks to the server through the shared client only, and
  // knows the server by its router's type at most.
  {
    files: ['apps/web/src/**/*.ts', 'apps/web/src/**/*.tsx'],
    rules: restrict(
      [
        ...appsForbidden('The web client talks to the server through @molf/client, never its code.'),
        { name: 'ws', message: 'The web client runs in browsers: use @molf/client.' },
        { name: '@molf/client/node', message: 'The web client runs in browsers: use @molf/client.' },
      ],
      [{ group: ['node:*'], message: 'The web client runs in browsers: no Node modules.' }],
    ),
  },
);
