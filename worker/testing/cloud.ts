// Local stand-ins for the cloud APIs, speaking each provider's documented wire protocol:
// - OpenAI chat completions: POST /v1/chat/completions, `stream: true` → Server-Sent Events of
//   `chat.completion.chunk` objects, then `data: [DONE]`. Tool calls stream as the API streams them:
//   `delta.tool_calls[]` pieces keyed by `index` (id, type and name in a call's first piece, its
//   arguments spread over the next ones, one call after the other), then `finish_reason: "tool_calls"`.
//   A script (`chatScript`) gives each request its reply; `chats` keeps what each request asked. Without
//   `stream: true` the answer is one `chat.completion` object (`choices[0].message`), as the API's default.
//   Structured outputs: `response_format: {type: "json_schema", json_schema: {name, strict, schema}}` is
//   checked as the API checks it (a name of [A-Za-z0-9_-]{1,64}, a schema; strict: every object lists all its
//   properties in `required` and sets `additionalProperties: false`, else 400 invalid_request_error) and
//   answered with JSON text fitting the schema: `structuredReplyFor(request)` when it answers, else
//   `structuredReply` when set, else a value built from the schema
//   (each property: its first enum value or type's first non-null, "stand-in" for strings, 0, true).
// - OpenAI embeddings: POST /v1/embeddings, answered by the shared stand-in (tests/infra embeddings.ts).
// - OpenAI speech: POST /v1/audio/speech, `response_format: "pcm"` → chunked raw 24 kHz PCM16LE
//   (real speech here: espeak-ng + sox).
// - Deepgram live: WS /v1/listen with `Authorization: Token …`; binary audio in; `Results` messages
//   (`channel.alternatives[0].transcript`, `is_final`, `speech_final`, `from_finalize`) out: interim
//   ones (`is_final: false`) as audio arrives, growing with the speech heard since the last final
//   (empty during silence, repeated when nothing new was heard), and the final one on `Finalize`;
//   `Finalize` / `KeepAlive` / `CloseStream` control messages.
// - ElevenLabs stream: POST /v1/text-to-speech/{voice_id}/stream?output_format=pcm_<rate> with the
//   `xi-api-key` header and `{text, model_id, voice_settings}` → chunked raw PCM16LE at that rate;
//   a wrong key is answered 401 `{"detail":{"status":"invalid_api_key",…}}`, a bad body or format 422/400.
// Faults are injected per request: a stream that breaks mid-way, a connection refused (reset before
// any answer), or errors.
// Fixed delays (all 0 by default, for the latency bench): `chatFirstTokenDelayMs` before a chat answer's
// first byte, `ttsFirstByteDelayMs` before a speech answer's first byte (counted from the request; the
// synthesis itself counts toward it, `cacheSpeech` makes repeated texts free), `sttFinalDelayMs` from
// `Finalize` to its final result. `chatReplyFor` answers a chat request from what it asked;
// `deepgramTranscripts` gives each utterance a Deepgram stream hears its own transcript: an utterance is
// speech after at least 500 ms without any (a 100 ms blip of line noise starts none), so a `Finalize` in its
// middle (a peek) and another at the turn's end take one line of the script, not two.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { pcmToBytes } from '#worker/audio/pcm.js';
import { speech } from './audio.js';
import { embeddingsAnswer } from '@voice-platform/tests/infra';

export type Fault = 'none' | 'break_mid_stream' | 'refuse' | 'http_500' | 'http_401' | 'http_429';

/** One chat reply: text (spoken first), then tool calls (`arguments`: JSON text, sent in pieces), then end_call. */
export interface ChatTurn {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  endCall?: boolean;
}

/** What one chat request asked: its messages, the names of the tools offered, its tool_choice, whether it
 *  streams, and its response_format (null: none). */
export interface ChatRequest {
  messages: any[];
  tools: string[];
  toolChoice: unknown;
  stream: boolean;
  temperature: unknown;
  responseFormat: any;
}

export interface CloudStandIn {
  url: string;
  /** Plan of faults, one per request in order; afterwards `fault`. */
  faults: Fault[];
  fault: Fault;
  chatReply: string;
  chatEndCall: boolean;
  /** Replies to the next chat requests, one each in order; afterwards `chatReply` (and `chatEndCall`). */
  chatScript: ChatTurn[];
  /** Every chat request, in order. */
  chats: ChatRequest[];
  /** The answer to a json_schema response_format request (JSON-serialised as the message content); null: built from the schema. */
  structuredReply: unknown;
  /** Answers a json_schema request from what it asked; undefined or null: `structuredReply` as without it. */
  structuredReplyFor: ((req: ChatRequest) => unknown) | null;
  deepgramTranscript: string;
  /** The key the ElevenLabs endpoint accepts in `xi-api-key`. */
  elevenlabsKey: string;
  /** ms before a chat answer's first byte (default 0). */
  chatFirstTokenDelayMs: number;
  /** ms from a speech request to its answer's first byte, synthesis included (default 0). */
  ttsFirstByteDelayMs: number;
  /** ms from a Deepgram `Finalize` to its final result (default 0). */
  sttFinalDelayMs: number;
  /** Synthesise each (text, rate) once and replay it (default false). */
  cacheSpeech: boolean;
  /** Answers a (non-structured) chat request; undefined or null: `chatScript` / `chatReply` as without it. */
  chatReplyFor: ((req: ChatRequest) => ChatTurn | undefined) | null;
  /** Per Deepgram stream, the transcript of its n-th utterance; past the end (or null): `deepgramTranscript`. */
  deepgramTranscripts: string[] | null;
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; body: any }>;
  /** Deepgram streams: control messages received, `Results` sent (transcript, is_final). */
  deepgram: Array<{ url: string; auth: string | undefined; audioBytes: number; messages: string[]; results: Array<{ transcript: string; isFinal: boolean }> }>;
  /** Back to the defaults: no faults, the default replies and key, no recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

/** Deepgram stand-in pacing, in bytes of 16-bit audio (16 kHz: 32000 a second). */
const INTERIM_BYTES = 4000;
const WORD_BYTES = 8000;
/** This long without speech ends an utterance (500 ms): pauses between words are shorter. */
const UTTERANCE_GAP_BYTES = 16000;
/** This much speech after a gap starts the next utterance (100 ms): a blip of line noise does not. */
const UTTERANCE_START_BYTES = 3200;

export async function startCloudStandIn(): Promise<CloudStandIn> {
  const defaults = () => ({
    faults: [] as Fault[],
    fault: 'none' as Fault,
    chatReply: 'The open amount is forty dollars. Anything else?',
    chatEndCall: false,
    chatScript: [] as ChatTurn[],
    structuredReply: null as unknown,
    structuredReplyFor: null as CloudStandIn['structuredReplyFor'],
    deepgramTranscript: 'how much',
    elevenlabsKey: 'xi-local',
    chatFirstTokenDelayMs: 0,
    ttsFirstByteDelayMs: 0,
    sttFinalDelayMs: 0,
    cacheSpeech: false,
    chatReplyFor: null as CloudStandIn['chatReplyFor'],
    deepgramTranscripts: null as string[] | null,
  });
  const state: CloudStandIn = {
    url: '',
    ...defaults(),
    requests: [],
    chats: [],
    deepgram: [],
    reset() {
      Object.assign(state, defaults());
      state.requests.length = 0;
      state.chats.length = 0;
      state.deepgram.length = 0;
    },
    close: async () => undefined,
  };
  const nextFault = (): Fault => state.faults.shift() ?? state.fault;

  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(raw);
      } catch {
        /* not JSON */
      }
      state.requests.push({ path: req.url ?? '', headers: req.headers, body });
      const fault = nextFault();
      if (fault === 'refuse') {
        req.socket.destroy();
        return;
      }
      if (fault === 'http_401' || fault === 'http_500' || fault === 'http_429') {
        const status = { http_401: 401, http_500: 500, http_429: 429 }[fault];
        const message = { 401: 'Incorrect API key provided', 500: 'server error', 429: 'Rate limit reached' }[status];
        res.writeHead(status, { 'Content-Type': 'application/json', ...(status === 429 ? { 'Retry-After': '1' } : {}) });
        res.end(JSON.stringify({ error: { message, type: status === 429 ? 'requests' : 'invalid_request_error', code: null } }));
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/chat/completions') return chat(res, body, fault);
      if (req.method === 'POST' && req.url === '/v1/audio/speech') return speechReply(res, body, fault);
      if (req.method === 'POST' && req.url === '/v1/embeddings') {
        const a = embeddingsAnswer(body);
        return void res.writeHead(a.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(a.json));
      }
      const el = req.method === 'POST' ? /^\/v1\/text-to-speech\/([^/?]+)\/stream(\?.*)?$/.exec(req.url ?? '') : null;
      if (el) return elevenlabs(req, res, new URLSearchParams(el[2]?.slice(1) ?? ''), body, fault);
      res.writeHead(404).end();
    });
  });

  /** The API's refusal of a bad request: 400 with its error object. */
  function badRequest(res: http.ServerResponse, message: string, param: string): void {
    res.writeHead(400, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param, code: null } }));
  }

  /** The API's strict-mode rules for a json_schema response_format: the first problem, or null. */
  function strictProblem(schema: any, at = 'schema'): string | null {
    if (!schema || typeof schema !== 'object') return `${at} must be an object`;
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes('object')) {
      const props = Object.keys(schema.properties ?? {});
      if (schema.additionalProperties !== false) return `In context=(${at}), 'additionalProperties' is required to be supplied and to be false`;
      const required: string[] = schema.required ?? [];
      const missing = props.find((p) => !required.includes(p));
      if (missing) return `In context=(${at}), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'`;
      for (const p of props) {
        const problem = strictProblem(schema.properties[p], `${at}, properties, ${p}`);
        if (problem) return problem;
      }
    }
    if (types.includes('array') && schema.items) return strictProblem(schema.items, `${at}, items`);
    return null;
  }

  /** A value fitting `schema`: its first enum value, else one of its (first non-null) type. */
  function exampleOf(schema: any): unknown {
    if (Array.isArray(schema?.enum)) return schema.enum.find((v: unknown) => v !== null) ?? null;
    const type = (Array.isArray(schema?.type) ? schema.type : [schema?.type]).find((t: unknown) => t !== 'null');
    switch (type) {
      case 'object':
        return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, exampleOf(v)]));
      case 'array':
        return [];
      case 'string':
        return 'stand-in';
      case 'number':
      case 'integer':
        return 0;
      case 'boolean':
        return true;
      default:
        return null;
    }
  }

  /** Each event is flushed before the next, as a live model's are, so a `break_mid_stream` comes after text reached the client. */
  function chat(res: http.ServerResponse, body: any, fault: Fault): void {
    const format = body?.response_format ?? null;
    const stream = body?.stream === true;
    const receivedAt = performance.now();
    const asked: ChatRequest = {
      messages: body?.messages ?? [],
      tools: (body?.tools ?? []).map((t: any) => t?.function?.name),
      toolChoice: body?.tool_choice,
      stream,
      temperature: body?.temperature,
      responseFormat: format,
    };
    state.chats.push(asked);
    let turn: ChatTurn;
    if (format?.type === 'json_schema') {
      const spec = format.json_schema;
      if (!spec || typeof spec.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(spec.name)) return badRequest(res, "Invalid 'response_format.json_schema.name': a string of a-z, A-Z, 0-9, _ and - (at most 64)", 'response_format.json_schema.name');
      if (!spec.schema || typeof spec.schema !== 'object') return badRequest(res, "Missing required parameter: 'response_format.json_schema.schema'", 'response_format.json_schema.schema');
      const problem = spec.strict === true ? strictProblem(spec.schema) : null;
      if (problem) return badRequest(res, `Invalid schema for response_format '${spec.name}': ${problem}.`, 'response_format');
      turn = { text: JSON.stringify(state.structuredReplyFor?.(asked) ?? state.structuredReply ?? exampleOf(spec.schema)) };
    } else if (format !== null && format?.type !== 'text' && format?.type !== 'json_object') {
      return badRequest(res, "Invalid value for 'response_format.type': expected one of 'text', 'json_object' or 'json_schema'", 'response_format.type');
    } else {
      turn = state.chatReplyFor?.(asked) ?? state.chatScript.shift() ?? { text: state.chatReply, endCall: state.chatEndCall };
    }
    const calls = [...(turn.toolCalls ?? []), ...(turn.endCall ? [{ id: 'call_end', name: 'end_call', arguments: '' }] : [])];
    const base = { id: 'chatcmpl-local', created: Math.floor(Date.now() / 1000), model: body?.model ?? 'x' };
    const wait = state.chatFirstTokenDelayMs - (performance.now() - receivedAt);
    if (wait > 0) {
      const t = turn;
      setTimeout(() => answerChat(res, t, calls, base, stream, fault), wait);
      return;
    }
    answerChat(res, turn, calls, base, stream, fault);
  }

  function answerChat(res: http.ServerResponse, turn: ChatTurn, calls: Array<{ id: string; name: string; arguments: string }>, base: object, stream: boolean, fault: Fault): void {
    if (res.destroyed) return;
    if (!stream) {
      const message = {
        role: 'assistant',
        content: turn.text ?? null,
        refusal: null,
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
      };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const chunkBase = { ...base, object: 'chat.completion.chunk' };
    const write = (text: string) => new Promise<void>((resolve) => res.write(text, () => resolve()));
    const send = (delta: object, finish: string | null = null) =>
      write(`data: ${JSON.stringify({ ...chunkBase, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`);
    void (async () => {
      await send({ role: 'assistant', content: turn.text ? '' : null });
      const words = turn.text?.match(/\S+\s*/g) ?? [];
      for (let i = 0; i < words.length; i++) {
        if (fault === 'break_mid_stream' && i === Math.ceil(words.length / 2)) {
          res.socket?.destroy();
          return;
        }
        await send({ content: words[i] });
        if (res.destroyed) return;
      }
      for (const [index, call] of calls.entries()) {
        await send({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
        for (const piece of call.arguments.match(/[\s\S]{1,6}/g) ?? []) await send({ tool_calls: [{ index, function: { arguments: piece } }] });
        if (res.destroyed) return;
      }
      await send({}, calls.length ? 'tool_calls' : 'stop');
      await write('data: [DONE]\n\n');
      res.end();
    })();
  }

  /**
   * Streams PCM in odd-sized chunks (samples split across chunks), each flushed before the next as a
   * live synthesiser's are, so a `break_mid_stream` really comes after audio reached the client.
   */
  function streamPcm(res: http.ServerResponse, pcm: Buffer, chunk: number, fault: Fault, receivedAt?: number): void {
    const wait = receivedAt === undefined ? 0 : state.ttsFirstByteDelayMs - (performance.now() - receivedAt);
    if (wait > 0) {
      setTimeout(() => streamPcm(res, pcm, chunk, fault), wait);
      return;
    }
    if (res.destroyed) return;
    res.writeHead(200, { 'Content-Type': 'audio/pcm', 'Transfer-Encoding': 'chunked' });
    void (async () => {
      for (let at = 0; at < pcm.length; at += chunk) {
        if (fault === 'break_mid_stream' && at >= pcm.length / 2) {
          res.socket?.destroy();
          return;
        }
        await new Promise<void>((resolve) => res.write(pcm.subarray(at, at + chunk), () => resolve()));
        if (res.destroyed) return;
      }
      res.end();
    })();
  }

  const speechCache = new Map<string, Buffer>();
  function speak(text: string, rate: number): Buffer {
    if (!state.cacheSpeech) return pcmToBytes(speech(text, rate));
    const key = `${rate}:${text}`;
    let pcm = speechCache.get(key);
    if (!pcm) speechCache.set(key, (pcm = pcmToBytes(speech(text, rate))));
    return pcm;
  }

  function speechReply(res: http.ServerResponse, body: any, fault: Fault): void {
    const receivedAt = performance.now();
    streamPcm(res, speak(String(body?.input ?? ''), 24000), 4801, fault, receivedAt);
  }

  function elevenlabs(req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams, body: any, fault: Fault): void {
    const json = (status: number, detail: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ detail }));
    };
    if (req.headers['xi-api-key'] !== state.elevenlabsKey) return json(401, { status: 'invalid_api_key', message: 'Invalid API key' });
    if (typeof body?.text !== 'string' || !body.text) return json(422, [{ loc: ['body', 'text'], msg: 'field required', type: 'value_error.missing' }]);
    const speed = body.voice_settings?.speed;
    if (speed !== undefined && !(speed >= 0.7 && speed <= 1.2)) return json(400, { status: 'invalid_voice_settings', message: 'speed must be between 0.7 and 1.2' });
    const format = /^pcm_(8000|16000|22050|24000|44100)$/.exec(query.get('output_format') ?? '');
    if (!format) return json(400, { status: 'invalid_output_format', message: 'this stand-in speaks pcm_* output formats only' });
    const receivedAt = performance.now();
    streamPcm(res, speak(body.text, Number(format[1])), 3201, fault, receivedAt);
  }

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (!req.url?.startsWith('/v1/listen')) return socket.destroy();
    const fault = nextFault();
    if (fault === 'refuse') return socket.destroy();
    if (fault === 'http_401' || fault === 'http_500') {
      socket.end(`HTTP/1.1 ${fault === 'http_401' ? '401 Unauthorized' : '503 Service Unavailable'}\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => deepgram(ws, req, fault));
  });

  function deepgram(ws: WebSocket, req: http.IncomingMessage, fault: Fault): void {
    const conn = { url: req.url ?? '', auth: req.headers.authorization, audioBytes: 0, messages: [] as string[], results: [] as Array<{ transcript: string; isFinal: boolean }> };
    state.deepgram.push(conn);
    let start = 0;
    const results = (transcript: string, isFinal: boolean, fromFinalize = false) => {
      conn.results.push({ transcript, isFinal });
      return JSON.stringify({
        type: 'Results',
        channel_index: [0, 1],
        duration: 1.0,
        start,
        is_final: isFinal,
        speech_final: isFinal,
        ...(fromFinalize ? { from_finalize: true } : {}),
        channel: { alternatives: [{ transcript, confidence: 0.98, words: [] }] },
        metadata: { request_id: 'local', model_info: { name: 'general', version: 'local', arch: 'nova-2' }, model_uuid: 'local' },
      });
    };
    /** The utterance being heard (index into `deepgramTranscripts`; -1 before the first) and its words. */
    let utterance = -1;
    let words: string[] = [];
    /** Its words already sent in a final result: a later `Finalize` sends only the rest. */
    let finalWords = 0;
    /** Speech (not silence) heard since the last final result: how much of the transcript is "recognised". */
    let voicedBytes = 0;
    /** Audio without speech since the last speech (a gap ≥ UTTERANCE_GAP_BYTES ends the utterance). */
    let quietBytes = UTTERANCE_GAP_BYTES;
    /** Speech after a gap, not yet long enough to start the next utterance. */
    let startingBytes = 0;
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        const buf = data as Buffer;
        conn.audioBytes += buf.length;
        if (fault === 'break_mid_stream' && conn.audioBytes > 16000) {
          ws.terminate();
          return;
        }
        let peak = 0;
        for (let i = 0; i + 1 < buf.length; i += 2) peak = Math.max(peak, Math.abs(buf.readInt16LE(i)));
        if (peak <= 300) {
          quietBytes += buf.length;
          // A blip (quiet again for as long as a start needs): still in the gap.
          if (startingBytes && quietBytes >= UTTERANCE_START_BYTES) [startingBytes, quietBytes] = [0, UTTERANCE_GAP_BYTES];
        } else if (quietBytes >= UTTERANCE_GAP_BYTES || startingBytes) {
          startingBytes += buf.length;
          quietBytes = 0;
          if (startingBytes >= UTTERANCE_START_BYTES) {
            utterance++;
            words = (state.deepgramTranscripts?.[utterance] ?? state.deepgramTranscript).split(' ');
            finalWords = 0;
            voicedBytes = startingBytes;
            [startingBytes, quietBytes] = [0, 0];
          }
        } else {
          voicedBytes += buf.length;
          quietBytes = 0;
        }
        // An interim result every INTERIM_BYTES of audio: one more word per WORD_BYTES of speech since the last final.
        if (Math.floor(conn.audioBytes / INTERIM_BYTES) > Math.floor((conn.audioBytes - buf.length) / INTERIM_BYTES)) {
          const rest = words.slice(finalWords);
          ws.send(results(rest.slice(0, Math.min(Math.floor(voicedBytes / WORD_BYTES), rest.length)).join(' '), false));
        }
        return;
      }
      const msg = JSON.parse(data.toString()) as { type: string };
      conn.messages.push(msg.type);
      if (msg.type === 'Finalize') {
        // Speech since the last final: the utterance's words not sent yet (all of them: a perfect recogniser).
        const transcript = voicedBytes > 0 ? words.slice(finalWords).join(' ') : '';
        finalWords = words.length;
        voicedBytes = 0;
        if (state.sttFinalDelayMs > 0) {
          const at = start;
          setTimeout(() => {
            if (ws.readyState !== ws.OPEN) return;
            const was = start;
            start = at;
            ws.send(results(transcript, true, true));
            start = was;
          }, state.sttFinalDelayMs);
        } else ws.send(results(transcript, true, true));
        start += 1;
      }
      if (msg.type === 'CloseStream') {
        ws.send(JSON.stringify({ type: 'Metadata', transaction_key: 'deprecated', request_id: 'local', sha256: '', created: new Date().toISOString(), duration: 0, channels: 1 }));
        ws.close(1000);
      }
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
