/**
 * `npm run admin -- create|reset-password|token ...`: admin accounts and tokens on the configured
 * database (server/admin-cli.ts; docs/operations.md#admin-accounts-and-tokens).
 */
import { runAdminCommand } from './admin-cli.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

process.exitCode = await runAdminCommand(process.argv.slice(2), {
  env: process.env,
  readStdin,
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
});
