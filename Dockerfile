FROM node:20-bookworm-slim AS build
# gcc: `npm run build` compiles the executor's launcher (src/executor/sandbox/launcher.c,
# scripts/build-native.mjs) into dist/native/; without it executors start a bubblewrap per run.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# The MongoDB emulator workspace package: the build compiles against it (`kairos dev` imports it on
# demand), then the prune drops it and its dependencies. `--workspaces=false` is what makes prune
# remove a workspace; the final stage copies no packages/ either.
COPY packages ./packages
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
# The command line (src/cli) and the web console (console/, built by Vite into dist/console) are
# compiled against the typed client generated from client/ (generated/client).
COPY generated ./generated
COPY console ./console
COPY schema.graphql ./
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --workspaces=false

FROM node:20-bookworm-slim
# bubblewrap: the executor runs every job in a sandbox (docs/security.md); util-linux (setpriv)
# and procps come with the base image.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap iproute2 iptables && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
# `kairos apply` checks files against the API's input types, read from schema.graphql.
COPY package.json schema.graphql ./
USER node
ENTRYPOINT ["node", "bin/kairos.js"]
# No default role: `dev` needs the emulator, which this image leaves out. Give the role as the
# command (`api`, `scheduler`, `executor`, as docker-compose.yml does); alone, the image prints help.
CMD ["--help"]
