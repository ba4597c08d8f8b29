/**
 * One app for the alert tests that run over a private Redis to a local webhook receiver: alerts
 * allowed to loopback, a short scan lag, group window and alert timer grace, no sandbox; logged in
 * as the admin.
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

/**
 * The alert timers' grace in these tests (KAIROS_ALERT_TIMER_GRACE; 5 s in production): deadlines
 * and silences are handled this long after they are due. The runs here end long before or long
 * after their deadlines, so a second is ample for an end to be written.
 */
export const TEST_TIMER_GRACE = "PT1S";

export async function startAlertApp(): Promise<AlertApp> {
  const redis = await startRedis();
  const rx = await startReceiver();
  const app = await startTestApp({ redisUrl: redis.url, env: { KAIROS_ALERT_ALLOWED_CIDRS: "127.0.0.1/32", KAIROS_ALERT_SCAN_LAG: "PT0.3S", KAIROS_ALERT_GROUP_WINDOW: "PT1S", KAIROS_ALERT_TIMER_GRACE: TEST_TIMER_GRACE, KAIROS_SANDBOX: "none" } });
  const admin = await login(app.url, ADMIN.username, ADMIN.password);
  return { redis, rx, app, admin };
}

/** Stops what startAlertApp started (any part that never started is skipped). */
export async function stopAlertApp(a: Partial<AlertApp>): Promise<void> {
  await a.app?.dispose();
  await a.rx?.close();
  await a.redis?.stop();
}
