/**
 * The commands a run's start waits for (a ready queue's push and take) do not wait behind an
 * auto-pipeline in flight on their connection (issue #27): ioredis sends one auto-pipeline at a
 * time, each once the one before it was answered, so a take issued while the executor's event
 * publishes were in flight cost a round trip more. A fake server that holds its answer to a
 * pipelined SET shows what the client sends meanwhile.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { openRedis, quitRedis, type RedisClient } from "../../src/shared-state/redis/index.js";
import { IMMEDIATE_COMMANDS } from "../../src/shared-state/redis/state.js";
import { scriptCommand } from "../../src/shared-state/redis/scripts.js";
import { scripts } from "../../src/shared-state/redis/lua/all.js";
import { waitUntil } from "../helpers/redis-servers.js";

/** The command names of RESP arrays in `data` (enough for the commands this test sends). */
function commandNames(data: string): string[] {
  const names: string[] = [];
  const parts = data.split("\r\n");
  for (let i = 0; i < parts.length; i++) if (parts[i]!.startsWith("*") && parts[i + 1]?.startsWith("$")) names.push(parts[i + 2]!.toLowerCase());
  return names;
}

const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/** A server that answers the connection's set-up at once and holds every SET's answer until released. */
function fakeRedis(): { server: Server; received: string[]; release: () => void; port: () => number } {
  const received: string[] = [];
  let socket: Socket | null = null;
  let releasing = false;
  const answers: string[] = [];
  // Answers go out in the order the commands came (RESP has no ids): one held SET holds the ones after it.
  const flush = () => {
    while (answers.length > 0 && (answers[0] !== "HOLD" || releasing)) {
      const a = answers.shift()!;
      socket?.write(a === "HOLD" ? "+OK\r\n" : a);
    }
  };
  const server = createServer((s) => {
    socket = s;
    s.on("data", (chunk) => {
      for (const name of commandNames(chunk.toString("latin1"))) {
        received.push(name);
        if (name === "info") answers.push(bulk("# Server\r\nredis_version:7.2.0\r\nloading:0\r\n"));
        else if (name === "set") answers.push("HOLD");
        else if (name === "exists") answers.push(":0\r\n");
        else answers.push("+OK\r\n");
      }
      flush();
    });
  });
  return {
    server,
    received,
    release: () => {
      releasing = true;
      flush();
    },
    port: () => (server.address() as { port: number }).port,
  };
}

let opened: { redis: RedisClient | null; server: Server } | null = null;
afterEach(async () => {
  if (opened?.redis) await quitRedis(opened.redis).catch(() => undefined);
  opened?.server.close();
  opened = null;
});

it("lists the push and take scripts and the limited owners' check as immediate", () => {
  expect(IMMEDIATE_COMMANDS).toEqual(expect.arrayContaining([scriptCommand(scripts.pushReady), scriptCommand(scripts.takeReady), "exists"]));
});

it("sends an immediate command while an auto-pipeline waits for its answer, and auto-pipelined ones after it", async () => {
  const fake = fakeRedis();
  await new Promise<void>((r) => fake.server.listen(0, "127.0.0.1", r));
  opened = { redis: null, server: fake.server };
  const redis = await openRedis(`redis://127.0.0.1:${fake.port()}`, "t-immediate", () => undefined, { autoPipeline: true, immediate: ["exists"] });
  opened.redis = redis;
  const set = redis.set("k", "v"); // auto-pipelined: its answer is held
  await waitUntil("the SET to reach the server", async () => fake.received.includes("set"), 5_000);
  const exists = redis.exists("k2"); // immediate: sent while the SET's pipeline waits
  const later = redis.set("k3", "v"); // auto-pipelined: waits for the pipeline before it
  await waitUntil("the EXISTS to reach the server while the SET is unanswered", async () => fake.received.includes("exists"), 5_000);
  expect(fake.received.filter((n) => n === "set")).toHaveLength(1);
  fake.release();
  await expect(Promise.all([set, exists, later])).resolves.toEqual(["OK", 0, "OK"]);
  expect(fake.received.filter((n) => n !== "info" && n !== "client")).toEqual(["set", "exists", "set"]);
});
