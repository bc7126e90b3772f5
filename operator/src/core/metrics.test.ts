// Counters a dashboard or alert rates over exist at 0 before anything happens: Prometheus then shows a
// quiet operator (rate 0), and a first error is an increase, not a series appearing.
import { createMetrics, forgetFleet, initFleetCounters } from './metrics.js';

it('reconcile errors per kind, and per fleet scrape failures and scale events, start at 0 and go with the fleet', async () => {
  const metrics = createMetrics();
  let text = await metrics.registry.metrics();
  expect(text).toContain('voice_operator_reconcile_errors_total{kind="fleet"} 0');
  expect(text).toContain('voice_operator_reconcile_errors_total{kind="bot"} 0');

  initFleetCounters(metrics, 'voice', 'default');
  initFleetCounters(metrics, 'voice', 'default'); // every pass: stays 0
  text = await metrics.registry.metrics();
  expect(text).toContain('voice_operator_scrape_failures_total{namespace="voice",fleet="default"} 0');
  expect(text).toContain('voice_operator_scale_events_total{namespace="voice",fleet="default",direction="up"} 0');
  expect(text).toContain('voice_operator_scale_events_total{namespace="voice",fleet="default",direction="down"} 0');

  metrics.fleetLoad.set({ namespace: 'voice', fleet: 'default' }, 1.2);
  metrics.fleetAdmittableCalls.set({ namespace: 'voice', fleet: 'default' }, 4);
  expect(await metrics.registry.metrics()).toContain('voice_operator_fleet_load{namespace="voice",fleet="default"} 1.2');
  forgetFleet(metrics, 'voice', 'default');
  text = await metrics.registry.metrics();
  expect(text).not.toContain('fleet="default"');
});
