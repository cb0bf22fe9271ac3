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

export async function measure(external: string[]): Promise<BundleSize> {
  const result = await build({
    entryPoints: [join(distDir, 'index.js')],
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
  const rows: [string, BundleSize][] = [
    ['without @trpc/client', await measure(['@trpc/client'])],
    ['own code only (no @trpc/*)', await measure(['@trpc/client', '@trpc/server', '@trpc/server/*'])],
    ['with tRPC bundled', await measure([])],
  ];
  for (const [label, size] of rows) {
    console.log(`@order-service/client ${label.padEnd(27)} ${kb(size.minified).padStart(10)} minified ${kb(size.gzipped).padStart(10)} gzipped`);
  }
}
