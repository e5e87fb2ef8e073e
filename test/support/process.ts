import { spawn } from 'node:child_process';

export interface ServiceProcess {
  child: ReturnType<typeof spawn>;
  /** The exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  /** The HTTP port, once the service logs that it listens; rejects if it exits first. */
  listening: Promise<number>;
  output(): string;
}

/**
 * Runs `src/main.ts` as a real process, as `npm start` would (through tsx instead of the
 * build). An empty variable in `env` counts as unset for the service's configuration.
 */
export function startProcess(env: Record<string, string>, startTimeoutMs = 30_000): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), startTimeoutMs);
    child.stdout.on('data', () => {
      const line = output.split('\n').find((l) => l.includes('service listening'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).port);
      }
    });
    exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited early:\n${output}`));
    });
  });
  return { child, exited, listening, output: () => output };
}
