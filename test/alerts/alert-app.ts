/**
 * One app for the alert tests that run over a private Redis to a local webhook receiver: alerts
 * allowed to loopback, a short scan lag and group window, no sandbox; logged in as the admin.
 */
import { startTestApp, ADMIN, type TestApp } from "../helpers/app.js";
import { login } from "../helpers/graphql.js";
import { startRedis, type PrivateRedis } from "../support/local-redis.js";
import { startReceiver, type Receiver } from "./receiver.js";

export interface AlertApp {
  redis: PrivateRedis;
  rx: Receiver;
  app: TestApp;
  admin: string;
}

export async function startAlertApp(): Promise<AlertApp> {
  const redis = await startRedis();
  const rx = await startReceiver();
  const app = await startTestApp({ redisUrl: redis.url, env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT1S", KAIROS_SANDBOX: "none" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  return { redis, rx, app, admin };
}

/** Stops what startAlertApp started (any part that never started is skipped). */
export async function stopAlertApp(a: Partial<AlertApp>): Promise<void> {
  await a.app?.dispose();
  await a.rx?.close();
  await a.redis?.stop();
}
