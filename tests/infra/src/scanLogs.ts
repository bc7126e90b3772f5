// The last step of `make test` (scripts/test.sh): every log the run kept (test-artifacts/logs/, see
// logs.ts) is scanned for secrets (secrets.ts). Exit 0: none; 1: findings (file:line, secret redacted)
// or no logs at all (then the suites' logs are not being kept and the check would prove nothing); 2:
// the scan could not run. Usage: node tests/dist/infra/src/scanLogs.js [folder]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { logRoot } from './logs.js';
import { knownSecrets, scanLogs } from './secrets.js';

const MAX_SHOWN = 50;

function main(): number {
  const dir = path.resolve(process.argv[2] ?? logRoot());
  let known;
  try {
    known = knownSecrets();
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  if (!existsSync(dir)) {
    process.stderr.write(`secrets scan: ${dir} does not exist: no suite kept its logs\n`);
    return 1;
  }
  const { files, findings } = scanLogs(dir, known);
  if (files === 0) {
    process.stderr.write(`secrets scan: no *.log file under ${dir}: no suite kept its logs\n`);
    return 1;
  }
  if (!findings.length) {
    process.stdout.write(`secrets scan: ${files} log files under ${path.relative(process.cwd(), dir) || dir}, ${known.length} known secrets and the shapes of API keys, webhook secrets, JWTs, passwords, Authorization credentials and card numbers: none found\n`);
    return 0;
  }
  process.stdout.write(`secrets scan: ${findings.length} secret(s) in the logs under ${dir}:\n`);
  for (const f of findings.slice(0, MAX_SHOWN)) process.stdout.write(`  ${f.file}:${f.line}: ${f.kind}: ${f.excerpt}\n`);
  if (findings.length > MAX_SHOWN) process.stdout.write(`  … and ${findings.length - MAX_SHOWN} more\n`);
  return 1;
}

process.exitCode = main();
