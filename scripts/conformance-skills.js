// Reads the runs of the Skills extension's scenarios (sep-2640-*) and applies their gate; called
// by conformance.sh. These are extension scenarios, in no requirement set, so the suite's
// requirement runs never reach them: conformance.sh runs each one with --scenario (forced).
//
// Input (environment): OUT (the folder the runs wrote, one server-<scenario>-<ts>/checks.json
// each), SCENARIOS (space-separated names), LABEL (the line's label).
// Gate: every scenario left a checks.json, and every check in it is a SUCCESS (a SKIPPED check
// means something was not exercised, a WARNING a SHOULD missed; both fail here).
// Output: the failing checks, then one line
//     skills (sep-2640, forced): N passed, M failed (C checks, S skipped)
// Exit: 0 gate passed, 1 gate failed.
"use strict";
const fs = require("fs");
const path = require("path");

const { OUT, SCENARIOS, LABEL } = process.env;
const names = SCENARIOS.split(/\s+/).filter(Boolean);
const dirs = fs.existsSync(OUT) ? fs.readdirSync(OUT).sort() : [];
let passed = 0, failed = 0, checks = 0, skipped = 0;
for (const name of names) {
  const re = new RegExp(`^server-${name}-\\d{4}-\\d\\d-\\d\\dT`);
  const dir = dirs.filter((d) => re.test(d) && fs.existsSync(path.join(OUT, d, "checks.json"))).pop();
  if (!dir) {
    console.log(`  ${name}: no checks.json (the scenario did not run; see ${OUT}/${name}.txt)`);
    failed++;
    continue;
  }
  const results = JSON.parse(fs.readFileSync(path.join(OUT, dir, "checks.json"), "utf8"));
  const bad = results.filter((c) => c.status !== "SUCCESS");
  checks += results.length;
  skipped += results.filter((c) => c.status === "SKIPPED").length;
  if (results.length === 0 || bad.length > 0) {
    failed++;
    console.log(`  ${name}: ${results.length - bad.length}/${results.length} checks SUCCESS`);
    for (const c of bad) console.log(`    ${c.status} ${c.id}: ${c.errorMessage || c.description || ""}`);
  } else {
    passed++;
  }
}
console.log(`${LABEL}: ${passed} passed, ${failed} failed (${checks} checks, ${skipped} skipped)`);
process.exit(failed === 0 ? 0 : 1);
