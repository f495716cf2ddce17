// Packs the package into artifacts/ and checks that the tarball installs
// into a fresh directory and imports: the package a user gets works.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const artifacts = resolve(process.argv[2] ?? "../../artifacts");
mkdirSync(artifacts, { recursive: true });
const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", artifacts], { encoding: "utf8" }));
const tarball = join(artifacts, packed[0].filename);
console.log("packed", tarball);
const dir = mkdtempSync(join(tmpdir(), "countersign-pack-"));
try {
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "pack-check", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], { cwd: dir, stdio: "inherit" });
  writeFileSync(
    join(dir, "check.mjs"),
    `import { Client, callDigest } from "@countersign/sdk";
const c = new Client({ url: "http://127.0.0.1:1", token: "t" });
if (typeof c.run !== "function" || typeof c.guard !== "function") throw new Error("no Client.run/guard");
const d = callDigest({ tenant: "acme", agent: "agt_programmer", session: "ses-1", turn: "t-77", tool_call_id: "call-9",
  capability: { action: "tools.call", target: "issue_refund" }, arguments: { payment_id: "payment_123", amount: 4900, currency: "GBP" }, connection: null });
if (d !== "sha256:6092e9a4f8924fc4281c69cdbec8656a3c38a8ad0cb8cfe2887eb5b355379c74") throw new Error("digest " + d);
for (const e of ["bus", "openai-agents", "ai", "langgraph", "mcp"]) import.meta.resolve("@countersign/sdk/" + e);
console.log("the packed @countersign/sdk installs and imports");
`,
  );
  execFileSync(process.execPath, ["check.mjs"], { cwd: dir, stdio: "inherit" });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
