# syntax=docker/dockerfile:1.7
# Operator image. Build from the repo root: docker build -f docker/operator.Dockerfile -t voice-operator .
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
RUN npm ci --workspace schemas --workspace operator --workspace tests --include-workspace-root --ignore-scripts
COPY schemas schemas
COPY operator operator
COPY tests/tsconfig.json tests/
COPY tests/infra tests/infra
RUN npx tsc -b operator \
 && npm prune --omit=dev --workspace schemas --workspace operator

FROM node:24.21-trixie-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/package.json ./
COPY --from=build /src/schemas/package.json schemas/
COPY --from=build /src/schemas/dist schemas/dist
COPY --from=build /src/operator/package.json operator/
COPY --from=build /src/operator/dist operator/dist
USER 10001:10001
WORKDIR /app/operator
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
