// `@voice-platform/schemas/node`: the shared code that needs Node's own modules (DNS, sockets), kept out of the
// main entry because the console's browser bundle loads the schemas.
export { AddressRefused, bareHost, checkHost, guardedLookup, isNonPublicAddress } from './addresses.js';
export { activeTraceId, startTracing, type Context, type Span, type SpanContext, type SpanDropReason, type Tracer, type Tracing, type TracingOptions } from './tracing.js';
export { recogniseBytes, speechBytes } from './offlineVoice.js';
export { linearToUlaw, pcmuPayload, PCMU_PAYLOAD_TYPE, ulawToLinear } from './g711.js';
