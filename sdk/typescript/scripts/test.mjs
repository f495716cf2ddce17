// Builds the countersign server from this repository into a temporary
// directory (unless COUNTERSIGN_BIN names one), then runs the compiled
// tests with node's test runner against it.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../../..");
let tmp;
if (!process.env.COUNTERSIGN_BIN) {
  tmp = mkdtempSync(join(tmpdir(), "countersign-bin-"));
  const bin = join(tmp, "countersign");
  execFileSync("go", ["build", "-o", bin, "./cmd/countersign"], { cwd: repo, stdio: "inherit" });
  process.env.COUNTERSIGN_BIN = bin;
}
const files = process.argv.slice(2);
const r = spawnSync(process.execPath, ["--test", "--test-concurrency=1", ...(files.length ? files : ["dist/test/"])], {
  cwd: resolve(here, ".."),
  stdio: "inherit",
});
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(r.status ?? 1);
