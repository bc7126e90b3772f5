# syntax=docker/dockerfile:1.7
# Console (Lit + Vite SPA) served by unprivileged nginx on 8080. VITE_API_URL is set at container
# start (the build carries a placeholder), so one image serves every environment.
# Build from the repo root: docker build -f docker/console.Dockerfile -t voice-console .
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
RUN npm ci --workspace schemas --workspace console --include-workspace-root --ignore-scripts
COPY schemas schemas
COPY console console
RUN VITE_API_URL=__VITE_API_URL__ npm run build --workspace console

FROM nginxinc/nginx-unprivileged:1.30-trixie
COPY --from=build /src/console/dist /usr/share/nginx/html
COPY docker/console-entrypoint.sh /docker-entrypoint.d/90-api-url.sh
COPY docker/console-nginx.conf /etc/nginx/conf.d/default.conf
EXPOSE 8080
