import type { CodegenConfig } from "@graphql-codegen/cli";

/**
 * Generates the typed client other teams use from the committed `schema.graphql` and the
 * operations in `client/`. Run `npm run codegen` after changing either; a test fails when the
 * committed output is stale.
 */
const config: CodegenConfig = {
  schema: "schema.graphql",
  documents: ["client/**/*.graphql"],
  generates: {
    "generated/client/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        emitLegacyCommonJSImports: false,
        scalars: { DateTime: "string", JSONObject: "Record<string, unknown>" },
      },
    },
  },
};

export default config;
