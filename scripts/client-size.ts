/**
 * Prints what the typed client adds to a browser bundle: client-sdk/dist/index.js bundled by
 * esbuild, minified and gzipped, with `@trpc/client` left out (an app using tRPC carries it).
 * Also printed: the package's own code alone (tRPC's runtime peer `@trpc/server`, which
 * `@trpc/client` imports too, left out as well) and the whole client with tRPC bundled.
 * Builds the package first when dist is missing.
 *
 *   npm run client:size
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { buildClient, distDir } from './client-build.ts';

export interface BundleSize {
  minified: number;
  gzipped: number;
}

/**
 * The bundle of `dist/index.js` whole, or of an app importing only `uses` from it (what tree-shaking
 * leaves: an app that does not sign in through the package carries none of oauth4webapi).
 */
export async function measure(external: string[], uses?: string[]): Promise<BundleSize> {
  const entry =
    uses === undefined
      ? { entryPoints: [join(distDir, 'index.js')] }
      : { stdin: { contents: `import { ${uses.join(', ')} } from './index.js';\nconsole.log(${uses.join(', ')});`, resolveDir: distDir, loader: 'js' as const } };
  const result = await build({
    ...entry,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external,
    write: false,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents;
  if (!code) throw new Error('esbuild produced no output');
  return { minified: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength };
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KiB`;

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  if (!existsSync(join(distDir, 'index.js'))) buildClient();
  const trpc = ['@trpc/client', '@trpc/server', '@trpc/server/*'];
  const rows: [string, BundleSize][] = [
    ['without @trpc/client', await measure(['@trpc/client'])],
    ['own code only (no @trpc/*)', await measure(trpc)],
    ['with tRPC bundled', await measure([])],
    ['an app: client alone', await measure(trpc, ['createOrderServiceClient'])],
    ['an app: client + token renewal', await measure(trpc, ['createOrderServiceClient', 'refreshingToken', 'sessionStorageTokenStore'])],
    ['an app: + PKCE sign-in', await measure(trpc, ['createOrderServiceClient', 'refreshingToken', 'sessionStorageTokenStore', 'startSignIn', 'finishSignIn'])],
    ['an app: + password sign-in', await measure(trpc, ['createOrderServiceClient', 'refreshingToken', 'sessionStorageTokenStore', 'signInWithPassword'])],
  ];
  for (const [label, size] of rows) {
    console.log(`@order-service/client ${label.padEnd(32)} ${kb(size.minified).padStart(10)} minified ${kb(size.gzipped).padStart(10)} gzipped`);
  }
}
