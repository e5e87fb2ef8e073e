# The service image: one image, its ROLE variable decides api / worker / all.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 3000
# The young generation's semi-space as `npm start` sets it (docs/operations.md, "Node flags").
CMD ["node", "--max-semi-space-size=32", "dist/src/main.js"]
