# syntax=docker/dockerfile:1.7
# Voice worker image with the offline providers: espeak-ng (TTS) and pocketsphinx + en-us model (STT).
# Build from the repo root: docker build -f docker/worker.Dockerfile -t voice-worker .
FROM node:24.21-trixie-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.base.json ./
# Every workspace manifest: npm ci checks the lockfile against all of them.
COPY schemas/package.json schemas/
COPY sdk/package.json sdk/
COPY backend/package.json backend/
COPY worker/package.json worker/
COPY console/package.json console/
COPY operator/package.json operator/
COPY tests/package.json tests/
# sdk and tests: the worker's dev dependencies (its tests, harness and benches; tsconfig.dev.json), which the
# image neither compiles nor ships: `tsc -b worker` builds src/ alone (worker/tsconfig.json, on schemas).
RUN npm ci --workspace schemas --workspace sdk --workspace worker --workspace tests --include-workspace-root --ignore-scripts
COPY schemas schemas
COPY worker worker
RUN npx tsc -b worker \
 && npm prune --omit=dev --workspace schemas --workspace worker

# The live pocketsphinx decoders' binding (worker/python/live_decoder.py): Debian trixie ships none
# (python3-pocketsphinx is in bookworm and sid only), so PyPI's pocketsphinx 5.0.4 for trixie's Python 3.13,
# pinned by hash, without its sounddevice dependency (microphone input, unused) and without its bundled model's
# large files (the decoders use Debian's pocketsphinx-en-us; Config() only needs the package's model folder).
FROM node:24.21-trixie-slim AS binding
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pip ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY docker/pocketsphinx-requirements.txt /tmp/
RUN pip install --break-system-packages --no-deps --require-hashes --target /opt/pocketsphinx --cert /etc/ssl/certs/ca-certificates.crt \
      -r /tmp/pocketsphinx-requirements.txt \
 && cd /opt/pocketsphinx/pocketsphinx/model/en-us \
 && rm -f en-us.lm.bin en-us-phone.lm.bin cmudict-en-us.dict en-us/means en-us/mdef en-us/sendump en-us/variances en-us/mixture_weights

FROM node:24.21-trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini espeak-ng pocketsphinx pocketsphinx-en-us python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production PORT=8000 PYTHONPATH=/opt/pocketsphinx
COPY --from=binding /opt/pocketsphinx /opt/pocketsphinx
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/package.json ./
COPY --from=build /src/schemas/package.json schemas/
COPY --from=build /src/schemas/dist schemas/dist
COPY --from=build /src/worker/package.json worker/
COPY --from=build /src/worker/dist worker/dist
# The live pocketsphinx decoders' program (worker/src/stt/live-decoder.ts), run by /usr/bin/python3 with the binding above.
COPY --from=build /src/worker/python worker/python
USER 10001:10001
WORKDIR /app/worker
EXPOSE 8000
# tini is PID 1: the preStop hook's `kill -TERM 1` reaches node through it and starts the drain.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
