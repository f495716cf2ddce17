// The types in src/openapi.ts are in step with the served OpenAPI document
// (httpapi/openapi.json): regenerating them gives the same file.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "countersign-types-"));
try {
  const out = join(dir, "openapi.ts");
  execFileSync(process.execPath, ["node_modules/openapi-typescript/bin/cli.js", "../../httpapi/openapi.json", "-o", out], { stdio: "ignore" });
  if (readFileSync(out, "utf8") !== readFileSync("src/openapi.ts", "utf8")) {
    console.error("src/openapi.ts is not what httpapi/openapi.json generates: run `npm run gen:types` and commit it");
    process.exit(1);
  }
  console.log("src/openapi.ts is in step with httpapi/openapi.json");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
