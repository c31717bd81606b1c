# Vane's server: `vane serve` on a data volume, as an unprivileged user (docs/deploy.md).
#   docker build -t vane .
#   docker run -d --name vane -p 8787:8787 -p 127.0.0.1:9464:9464 -v vane-data:/data vane
# Stage 1 builds (native SQLite binding, WebAssembly engine, TypeScript) and drops dev
# dependencies; stage 2 holds only what `vane serve` runs. No secret is baked in: keys live in
# the data volume, created with `docker exec vane vane keys create ...` (the volume is the working
# folder, so the CLI finds the data, .vane/, without --data).
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3's install takes its prebuilt binary where GitHub is reachable and otherwise compiles
# it, which needs a toolchain (here only).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# node-gyp takes Node's headers from the image instead of downloading them.
ENV npm_config_nodedir=/usr/local
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY . .
RUN npm run build:wasm && npm run build:ts && npm run build:console && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# Two glibc malloc arenas, not one per thread up to 8 a core: 30 s after a load each idle arena
# keeps its freed pages, and with two the server held 134-141 MiB against 148-152 (RSS,
# docs/performance.md, "Memory after a load: where it goes"). glibc reads it once, at start.
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist ./dist
COPY --from=build /src/build/vane.wasm /src/build/vane-scalar.wasm ./build/
RUN ln -s /app/bin/vane.js /usr/local/bin/vane \
 && mkdir /data \
 && chown node:node /data
# The node image's unprivileged user (uid 1000): the app's files stay root's and read-only to it.
USER node
WORKDIR /data
VOLUME ["/data"]
# The API, and /metrics on a port of its own (keep 9464 on the monitoring network).
EXPOSE 8787 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# `vane` is bin/vane.js: its #! line starts node with V8's semi-spaces at 8 MiB, ahead of NODE_OPTIONS,
# so `docker run -e NODE_OPTIONS=--max-semi-space-size=16 …` overrides it (docs/operations.md, "Memory").
# It needs GNU env's -S: keep a Debian-based image (busybox's env, Alpine's, has no -S).
ENTRYPOINT ["vane"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8787", "--metrics", "9464"]
