#!/usr/bin/env python3
# The worker's live pocketsphinx decoders (worker/src/stt/live-decoder.ts starts one per worker through its
# spawner). One decoder per call (session), fed the caller's audio while the caller speaks and reused across
# the call's turns: a partial hypothesis is there at once, the final one right after the end of speech, and
# the model is loaded once per call instead of once per turn.
#
# Frames both ways on stdin/stdout, little-endian: u8 type, u32 session, u32 payload length, payload.
#   worker → here: O open (JSON config) → K (JSON) or E (message) | S start an utterance (payload: first audio)
#                  | A audio (PCM16 mono at the model's rate) | P peek (payload: 1 byte, 1 = overlap) → T text
#                  | F end the utterance → T final text | D drop the utterance | C close the session
#   here → worker: R ready (session 0, JSON) | K | T | E (session 0: the program itself failed)
# Every O, P and F gets exactly one answer, in order per session.
import json
import os
import select
import struct
import sys
import time

try:
    # Debian's python3-pocketsphinx (bookworm): the 0.8 "5prealpha" SWIG binding.
    from pocketsphinx.pocketsphinx import Decoder

    LEGACY = True
except ImportError:
    try:
        # PyPI pocketsphinx 5.x (Debian trixie has no binding): its own Config.
        from pocketsphinx import Config, Decoder

        LEGACY = False
    except ImportError as e:
        sys.stderr.write(f'no pocketsphinx Python binding: {e}\n')
        sys.exit(3)

HEADER = struct.Struct('<BII')
SAMPLE_BYTES = 2
RATE = 16000
# An utterance is decoded up to this long (the worker stops a turn at 30 s): the decoder's memory stays bounded.
MAX_UTT_BYTES = 60 * RATE * SAMPLE_BYTES
# Speech over the bot is kept this long for an overlap peek (tentative turns end within ~1.2 s of speech).
MAX_OVERLAP_BYTES = 5 * RATE * SAMPLE_BYTES
# 20 ms: how an overlap stretch is fed again.
CHUNK_BYTES = RATE // 50 * SAMPLE_BYTES
# Idle decoders kept for the next call with the same grammar (loading one costs CPU and blocks this process).
MAX_IDLE = 8

stdin = sys.stdin.buffer
stdout = sys.stdout.buffer


def send(kind, sid, payload=b''):
    stdout.write(HEADER.pack(ord(kind), sid, len(payload)) + payload)
    stdout.flush()


def new_decoder(cfg):
    """A decoder for cfg: {hmm, dict, jsgf | lm, params: {name: value}} (the 0.8 '5prealpha' and 5.x bindings)."""
    config = Decoder.default_config() if LEGACY else Config()

    def put(key, value):
        if not LEGACY:
            # 5.x has no voice activity detection in the decoder (nor its settings): ours cuts the turns anyway.
            if config.exists(key):
                config[key] = value
        elif isinstance(value, bool):
            config.set_boolean('-' + key, value)
        elif isinstance(value, int):
            config.set_int('-' + key, value)
        elif isinstance(value, float):
            config.set_float('-' + key, value)
        else:
            config.set_string('-' + key, value)

    put('hmm', cfg['hmm'])
    put('dict', cfg['dict'])
    if cfg.get('jsgf'):
        if not LEGACY:
            config['lm'] = None  # 5.x's Config() starts with its bundled language model
        put('jsgf', cfg['jsgf'])
    else:
        put('lm', cfg['lm'])
    put('logfn', os.devnull)
    for key, value in (cfg.get('params') or {}).items():
        put(key, value)
    return Decoder(config)


def text_of(decoder):
    hyp = decoder.hyp()
    return (hyp.hypstr if hyp is not None else '') or ''


class Pool:
    """Decoders by config: idle ones wait for the next session with the same config (oldest dropped first)."""

    def __init__(self):
        self.idle = []  # (key, decoder), oldest first

    def take(self, key, cfg):
        for i, (k, d) in enumerate(self.idle):
            if k == key:
                del self.idle[i]
                return d, True
        return new_decoder(cfg), False

    def give(self, key, decoder):
        self.idle.append((key, decoder))
        while len(self.idle) > MAX_IDLE:
            self.idle.pop(0)


pool = Pool()
# Overlap decoders (a bot's phrases and the words callers say over a bot), shared by the sessions that use them
# (then idle in the pool): one decodes a tentative stretch whole, at a peek, while the session's own goes on live.
shared = {}  # key → [decoder, users]


class Session:
    def __init__(self, cfg):
        self.key = json.dumps({k: cfg[k] for k in cfg if k != 'overlap'}, sort_keys=True)
        self.decoder, self.reused = pool.take(self.key, cfg)
        self.overlap_key = None
        overlap = cfg.get('overlap')
        if overlap:
            self.overlap_key = json.dumps(overlap, sort_keys=True)
            entry = shared.get(self.overlap_key)
            if entry is None:
                entry = shared[self.overlap_key] = [pool.take(self.overlap_key, overlap)[0], 0]
            entry[1] += 1
        self.in_utt = False
        self.fed = 0
        self.audio = bytearray()

    def start(self, pcm):
        if self.in_utt:
            self.decoder.end_utt()
        self.decoder.start_utt()
        self.in_utt = True
        self.fed = 0
        self.audio = bytearray()
        self.feed(pcm)

    def feed(self, pcm):
        if not self.in_utt or not pcm or self.fed >= MAX_UTT_BYTES:
            return
        pcm = pcm[: MAX_UTT_BYTES - self.fed]
        self.fed += len(pcm)
        if len(self.audio) < MAX_OVERLAP_BYTES:
            self.audio += pcm[: MAX_OVERLAP_BYTES - len(self.audio)]
        self.decoder.process_raw(pcm, False, False)

    def peek(self, overlap):
        if not self.in_utt:
            return ''
        if overlap and self.overlap_key and self.fed <= MAX_OVERLAP_BYTES:
            d = shared[self.overlap_key][0]
            d.start_utt()
            # As the live decoder hears it (not full_utt: a whole-utterance normalisation hears short words worse).
            audio = bytes(self.audio)
            for at in range(0, len(audio), CHUNK_BYTES):
                d.process_raw(audio[at : at + CHUNK_BYTES], False, False)
            d.end_utt()
            return text_of(d)
        return text_of(self.decoder)

    def final(self):
        if not self.in_utt:
            return ''
        self.decoder.end_utt()
        self.in_utt = False
        self.audio = bytearray()
        return text_of(self.decoder)

    def drop(self):
        if self.in_utt:
            self.decoder.end_utt()
        self.in_utt = False
        self.audio = bytearray()

    def close(self):
        self.drop()
        pool.give(self.key, self.decoder)
        self.decoder = None
        if self.overlap_key:
            entry = shared[self.overlap_key]
            entry[1] -= 1
            if entry[1] <= 0:
                del shared[self.overlap_key]
                pool.give(self.overlap_key, entry[0])


def handle(sessions, kind, sid, payload):
    try:
        if kind == 'O':
            started = time.process_time()
            sessions[sid] = s = Session(json.loads(payload))
            send('K', sid, json.dumps({'loadCpuMs': round((time.process_time() - started) * 1000, 1), 'reused': s.reused}).encode())
            return
        s = sessions.get(sid)
        if kind == 'C':
            if s:
                del sessions[sid]
                s.close()
        elif s is None:
            if kind in 'PF':
                send('E', sid, b'no such session')
        elif kind == 'S':
            s.start(payload)
        elif kind == 'A':
            s.feed(payload)
        elif kind == 'P':
            send('T', sid, s.peek(payload[:1] == b'\x01').encode())
        elif kind == 'F':
            send('T', sid, s.final().encode())
        elif kind == 'D':
            s.drop()
    except Exception as e:  # a bad grammar or a decoder error: that session's request fails, the others go on
        if kind in 'OPF':
            send('E', sid, f'{type(e).__name__}: {e}'.encode())


def frames(buf):
    """The whole frames at the start of buf, and the bytes left over."""
    out, at = [], 0
    while len(buf) - at >= HEADER.size:
        kind, sid, length = HEADER.unpack_from(buf, at)
        if len(buf) - at - HEADER.size < length:
            break
        out.append((chr(kind), sid, bytes(buf[at + HEADER.size : at + HEADER.size + length])))
        at += HEADER.size + length
    return out, buf[at:]


def main():
    sessions = {}
    fd = stdin.fileno()
    buf = b''
    send('R', 0, json.dumps({'pid': os.getpid(), 'rate': RATE}).encode())
    while True:
        # Everything the worker has sent so far (at least one read's worth).
        chunks = [os.read(fd, 1 << 20)]
        if not chunks[0]:
            return
        while select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        batch, buf = frames(buf + b''.join(chunks))
        # A call waiting for words goes first: its own audio up to its last request, then the request; the
        # other calls' audio after (each call's frames stay in order). When many calls end a turn at once,
        # no answer waits for the audio of calls nobody is waiting on.
        last = {sid: i for i, (kind, sid, _) in enumerate(batch) if kind in 'OPF'}
        rest = []
        for i, (kind, sid, payload) in enumerate(batch):
            if i <= last.get(sid, -1):
                handle(sessions, kind, sid, payload)
            else:
                rest.append((kind, sid, payload))
        for kind, sid, payload in rest:
            handle(sessions, kind, sid, payload)


if __name__ == '__main__':
    try:
        main()
    except BrokenPipeError:
        pass
