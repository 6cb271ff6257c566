// `susbench rescore` in Node: stored signed reports scored again by the extension's own scoring and
// signing code (extension/worker/scoring.js and signing.js, loaded as the service worker loads them),
// so a re-score can never drift from what a run computes.
// Usage: node rescore.js EXTENSION_DIR < lines of {episode_id, payload, signature, key}
// Writes one line per input: {episode_id, signature_valid, outcome, reason, deciding} (null when unsigned).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");
const vm = require("node:vm");

const extension = process.argv[2];
for (const file of ["worker/scoring.js", "worker/signing.js"]) {
  vm.runInThisContext(fs.readFileSync(path.join(extension, file), "utf8"), { filename: file });
}
const { rescore } = globalThis.pageHelper.scoring;
const { hmacHex } = globalThis.pageHelper.signing;

async function one(line) {
  const stored = JSON.parse(line);
  const verdict = { episode_id: stored.episode_id, signature_valid: false, outcome: null, reason: null, deciding: null };
  if (!/^([0-9a-f]{2})+$/.test(stored.key || "")) return verdict;
  if ((await hmacHex(stored.key, stored.payload)) !== stored.signature) return verdict;
  const report = JSON.parse(stored.payload);
  if (report.episode_id !== stored.episode_id) return verdict;
  const [outcome, reason, deciding] = rescore(report);
  return { ...verdict, signature_valid: true, outcome, reason, deciding };
}

(async () => {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim()) process.stdout.write(`${JSON.stringify(await one(line))}\n`);
  }
})().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
