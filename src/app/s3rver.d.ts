/** The part of s3rver 3.7 (a devDependency without types) that `kairos dev` and the tests use. */
declare module "s3rver" {
  import type { AddressInfo } from "node:net";

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    vhostBuckets?: boolean;
    configureBuckets?: { name: string; configs?: (string | Buffer)[] }[];
  }

  class S3rver {
    constructor(options?: S3rverOptions);
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
    /** Creates the `configureBuckets` (run() does it too). */
    configureBuckets(): Promise<void>;
    /** The Koa request handler, to serve it from one's own HTTP server. */
    callback(): (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void;
  }

  export default S3rver;
}
