# syntax=docker/dockerfile:1.7
# Backend image (api and dialler roles; also runs `node dist/seed.js admin`).
# Build from the repo root: docker build -f docker/backend.Dockerfile -t voice-backend .
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
RUN npm ci --workspace schemas --workspace backend --workspace tests --include-workspace-root --ignore-scripts
COPY schemas schemas
COPY backend backend
COPY tests/tsconfig.json tests/
COPY tests/infra tests/infra
RUN npx tsc -b backend \
 && npm prune --omit=dev --workspace schemas --workspace backend

FROM node:24.21-trixie-slim
# espeak-ng and sox: the bot-test caller's offline voice (backend/src/botTests/caller.ts) runs in the dialler.
RUN apt-get update && apt-get install -y --no-install-recommends tini espeak-ng sox && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production PORT=8080
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/package.json ./
COPY --from=build /src/schemas/package.json schemas/
COPY --from=build /src/schemas/dist schemas/dist
COPY --from=build /src/backend/package.json backend/
COPY --from=build /src/backend/dist backend/dist
USER 10001:10001
WORKDIR /app/backend
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
