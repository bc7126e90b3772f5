import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GROUP_VERSION, apiErrorMessage } from '../core/kube.js';
import { createNamespace, installCrds, testClients } from '../../testing/kube.js';
import { CRD_DIRS, renderCrds } from './generate.js';

const clients = testClients();
let namespace = '';

beforeAll(async () => {
  await installCrds(clients);
  namespace = await createNamespace(clients, 'crds');
});

const fleet = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: GROUP_VERSION,
  kind: 'VoiceFleet',
  metadata: { name, namespace },
  spec,
});

async function rejection(obj: k8s.KubernetesObject): Promise<string> {
  try {
    await clients.objects.create(obj);
  } catch (err) {
    expect(err).toBeInstanceOf(k8s.ApiException);
    expect((err as k8s.ApiException<unknown>).code).toBe(422);
    return apiErrorMessage(err);
  }
  throw new Error(`${obj.metadata?.name} was accepted`);
}

describe('CRD YAML', () => {
  it('the committed files are exactly what `npm run gen:crds` generates', () => {
    for (const dir of CRD_DIRS) {
      for (const [file, text] of renderCrds()) {
        expect({ file: path.join(dir, file), text: readFileSync(path.join(dir, file), 'utf8') }).toEqual({ file: path.join(dir, file), text });
      }
    }
  });
});

describe('CRDs on the API server', () => {
  it('fills in the defaults of a minimal VoiceFleet', async () => {
    const created = await clients.objects.create(fleet('minimal', { image: 'voice-worker:1' }));
    expect((created as unknown as { spec: unknown }).spec).toEqual({
      image: 'voice-worker:1',
      minReplicas: 1,
      maxReplicas: 10,
      callsPerWorker: 30,
      targetLoad: 0.6,
      buffer: { calls: 0, percent: 0 },
      scaleDownDelaySeconds: 300,
      drainTimeoutSeconds: 600,
      port: 8000,
    });
  });

  it('rejects minReplicas above maxReplicas', async () => {
    const msg = await rejection(fleet('min-over-max', { image: 'w', minReplicas: 5, maxReplicas: 2 }));
    expect(msg).toContain('minReplicas must not exceed maxReplicas');
  });

  it('rejects a non-positive callsPerWorker, a negative buffer and a missing image', async () => {
    expect(await rejection(fleet('zero-calls', { image: 'w', callsPerWorker: 0 }))).toContain('spec.callsPerWorker');
    expect(await rejection(fleet('neg-buffer', { image: 'w', buffer: { calls: -1 } }))).toContain('spec.buffer.calls');
    expect(await rejection(fleet('no-image', { minReplicas: 1 }))).toContain('spec.image');
  });

  it('takes a targetLoad in (0, 1] and refuses one outside it, naming the field', async () => {
    for (const [name, targetLoad] of [['load-zero', 0], ['load-negative', -0.1], ['load-over', 1.01]] as const) {
      const msg = await rejection(fleet(name, { image: 'w', targetLoad }));
      expect(msg).toContain('spec.targetLoad');
    }
    expect(await rejection(fleet('load-text', { image: 'w', targetLoad: 'high' }))).toContain('spec.targetLoad');
    for (const [name, targetLoad] of [['load-one', 1], ['load-small', 0.05]] as const) {
      const created = await clients.objects.create(fleet(name, { image: 'w', targetLoad }));
      expect((created as unknown as { spec: { targetLoad: number } }).spec.targetLoad).toBe(targetLoad);
    }
  });

  it('rejects invalid Bots with the shared bot schema', async () => {
    const bot = (name: string, spec: Record<string, unknown>) => ({ apiVersion: GROUP_VERSION, kind: 'Bot', metadata: { name, namespace }, spec });
    expect(await rejection(bot('bad-var', { name: 'b', variables: [{ name: '1bad' }] }))).toContain('spec.variables[0].name');
    expect(await rejection(bot('bad-speed', { name: 'b', voice: { provider: 'espeak-ng', voice_id: 'en', speed: 9 } }))).toContain('spec.voice.speed');
    expect(await rejection(bot('no-name', { language: 'en-US' }))).toContain('spec.name');
    const ok = await clients.objects.create(bot('good', { name: 'Good bot', variables: [{ name: 'first_name', required: true }], policy: null }));
    expect((ok as unknown as { spec: { variables: unknown } }).spec.variables).toEqual([{ name: 'first_name', required: true, description: '' }]);
    // A keypad-only intent (dtmf) leaves out examples, as the bots API takes it.
    const keys = await clients.objects.create(bot('keys', { name: 'Keys', policy: { intents: [{ name: 'account', dtmf: '42', reply: 'Account {{digits}}.' }], fallback: { reply: 'Sorry?' } } }));
    expect((keys as unknown as { spec: { policy: unknown } }).spec.policy).toEqual({ intents: [{ name: 'account', dtmf: '42', reply: 'Account {{digits}}.' }], fallback: { reply: 'Sorry?' } });
  });
});
