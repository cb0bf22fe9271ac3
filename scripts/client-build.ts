/**
 * Builds client-sdk/dist: writes the router declaration from the server's router type, proves it
 * equivalent to the server's, compiles the package, and checks that nothing in dist points
 * outside the package but to `@trpc/client`, `@trpc/server` (the client's peer) and `oauth4webapi`
 * (the sign-in helpers).
 *
 *   npm run client:build
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { API_PREFIX } from '../server/lib/api-paths.ts';
import { restRoutes } from '../server/http/rest-routes.ts';
import { appRouter } from '../server/router.ts';
import { checkRouterTypes, generatedRouterFile, generateRouterTypes } from './client-router-types.ts';

const root = resolve(import.meta.dirname, '..');
export const sdkDir = join(root, 'client-sdk');
export const distDir = join(sdkDir, 'dist');

/** Bare specifiers the published files may import. */
const allowedImports = [/^@trpc\/client$/, /^@trpc\/server(\/observable)?$/, /^oauth4webapi$/];

/** Each procedure the REST facade serves, with its summary and route, for the client's doc comments. */
function procedureDocs(): Map<string, { summary?: string; route?: string }> {
  const docs = new Map<string, { summary?: string; route?: string }>();
  for (const route of restRoutes(appRouter)) {
    docs.set(route.procedurePath, { summary: route.summary, route: `${route.method} ${API_PREFIX}${route.path}` });
  }
  return docs;
}

function compile(): void {
  const configPath = join(sdkDir, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail([d]) });
  if (!config) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram(config.fileNames, config.options);
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length > 0) fail(diagnostics);
}

function fail(diagnostics: readonly ts.Diagnostic[]): never {
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' };
  throw new Error(`client-sdk does not compile:\n${ts.formatDiagnostics(diagnostics, host)}`);
}

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

/** Every module specifier of the built files must be relative (inside dist) or an allowed package. */
export function checkDist(): void {
  const problems: string[] = [];
  for (const file of files(distDir)) {
    if (!/\.(js|d\.ts)$/.test(file)) continue;
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const specifiers: string[] = [];
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        specifiers.push(node.moduleSpecifier.text);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        specifiers.push(node.argument.literal.text);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
        specifiers.push(node.arguments[0].text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    for (const specifier of specifiers) {
      const inside = specifier.startsWith('.') && resolve(file, '..', specifier).startsWith(distDir);
      if (!inside && !allowedImports.some((pattern) => pattern.test(specifier))) {
        problems.push(`${relative(root, file)} imports ${specifier}`);
      }
    }
  }
  if (problems.length > 0) throw new Error(`client-sdk/dist must be self-contained:\n  ${problems.join('\n  ')}`);
}

/** What client-sdk/src/app-router.ts must hold: the router's declarations, with each procedure's docs. */
export function routerTypesText(): string {
  return generateRouterTypes({ docs: procedureDocs() });
}

/** Writes client-sdk/src/app-router.ts (a committed, reviewed file) when it differs, and proves it equivalent. */
export function writeRouterTypes(): boolean {
  const text = routerTypesText();
  const stale = !existsSync(generatedRouterFile) || readFileSync(generatedRouterFile, 'utf8') !== text;
  if (stale) writeFileSync(generatedRouterFile, text);
  checkRouterTypes();
  return stale;
}

export function buildClient(): void {
  writeRouterTypes();
  rmSync(distDir, { recursive: true, force: true });
  compile();
  checkDist();
}

if (import.meta.filename === resolve(process.argv[1] ?? '') && process.argv.includes('--types-only')) {
  const wrote = writeRouterTypes();
  console.log(`${relative(process.cwd(), generatedRouterFile)} ${wrote ? 'written' : 'is up to date'}`);
} else if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  const started = Date.now();
  buildClient();
  console.log(`client-sdk built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${relative(process.cwd(), distDir)}`);
}
