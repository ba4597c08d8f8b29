FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
# bubblewrap: the executor runs every job in a sandbox (docs/security.md); util-linux (setpriv)
# and procps come with the base image.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap iproute2 iptables && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY package.json ./
USER node
ENTRYPOINT ["node", "bin/kairos.js"]
CMD ["dev"]
