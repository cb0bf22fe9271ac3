/* global module */
/**
 * The layers of server/, written down once (docs/architecture.md#layers), and checked by
 * `npm run lint`: a file imports only from its own layer or the layers below it, and no files
 * import each other in a circle (the client package's files neither).
 *
 * From the ground up; each entry is a layer, each string a path under server/ (a folder, or a file).
 */
const LAYERS = [
  ['errors/'],
  ['lib/', 'auth/'],
  ['db/'],
  ['trpc/', 'events/'],
  ['modules/'],
  ['http/', 'router.ts'],
  ['oauth/', 'config.ts', 'testing.ts'],
  ['app.ts', 'bootstrap.ts', 'migrate.ts', 'admin-cli.ts'],
  ['main.ts', 'admin.ts'],
];

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pathsOf = (layer) => `^server/(${layer.map((place) => (place.endsWith('/') ? escape(place) : `${escape(place)}$`)).join('|')})`;

const layerRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `layer-${layer[0].replace(/[/.]/g, '')}`,
  comment: `server/${layer.join(', server/')} may import only its own layer and the ones below (docs/architecture.md#layers).`,
  severity: 'error',
  from: { path: pathsOf(layer) },
  to: { path: LAYERS.slice(index + 1).map(pathsOf) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other in a circle: one of them belongs lower, or a shared part in a file of its own.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'server-not-from-outside',
      comment: 'server/ stands alone: it imports nothing from the scripts, tests or the client package.',
      severity: 'error',
      from: { path: '^server/' },
      to: { path: '^(scripts|test|client-sdk)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
