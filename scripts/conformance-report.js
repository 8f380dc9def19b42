// Reads one run of the MCP conformance suite and applies the gate; called by conformance.sh.
//
// Input (environment): SUITE_DIR (the installed suite), REV, OUT (the run's results folder, with
// the suite's stdout.txt), URL, SUITE_RC, ELAPSED, BASELINE_FILE (may be absent),
// REQUIRED_NOT_SCORED (space-separated scenario names).
//
// The scenario list comes from the suite's requirements/REV.yaml (`server`: scored;
// `not_scored` entries with `leg: server`: run but not scored); each scenario's verdict from
// its latest checks.json (a scenario passes when no check is a FAILURE), or from the suite's
// stdout summary when a scenario threw before writing one.
//
// Output: a table, the gate's findings, then the two lines
//     conformance REV: N passed, M failed      (scored scenarios)
//     not scored: N passed, M failed
// Exit: 0 gate passed, 1 gate failed, 5 no usable results.
"use strict";
const fs = require("fs");
const path = require("path");

const { SUITE_DIR, REV, OUT, URL, SUITE_RC, ELAPSED, BASELINE_FILE, REQUIRED_NOT_SCORED } = process.env;
const YAML = require(require.resolve("yaml", { paths: [SUITE_DIR] }));
const suiteVersion = JSON.parse(fs.readFileSync(path.join(SUITE_DIR, "package.json"), "utf8")).version;

const req = YAML.parse(fs.readFileSync(path.join(SUITE_DIR, "requirements", `${REV}.yaml`), "utf8"));
const scored = req.server || [];
const notScored = (req.not_scored || []).filter((e) => e.leg === "server");

const read = (file) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "");
const stdout = read(path.join(OUT, "stdout.txt"));
const haveSummary = stdout.includes("=== SUMMARY ===");
// stdout summary lines: "<mark> <scenario>: N passed, M failed"
const summary = {};
for (const m of stdout.matchAll(/^\S+ (\S+): (\d+) passed, (\d+) failed$/gm)) {
  summary[m[1]] = { passed: +m[2], failed: +m[3] };
}
// result folders: server-<scenario>-<ISO timestamp with - for : and .>
const dirs = {};
for (const d of fs.readdirSync(OUT)) {
  const m = d.match(/^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/);
  if (m && fs.existsSync(path.join(OUT, d, "checks.json"))) (dirs[m[1]] ??= []).push(d);
}

function verdict(name) {
  const r = { name, result: "MISSING", pass: 0, fail: 0, warn: 0, skip: 0, failing: [], note: "" };
  const ds = (dirs[name] || []).sort();
  if (ds.length) {
    let checks;
    try {
      checks = JSON.parse(fs.readFileSync(path.join(OUT, ds[ds.length - 1], "checks.json"), "utf8"));
    } catch (e) {
      r.note = "unreadable checks.json";
      return r;
    }
    for (const c of checks) {
      if (c.status === "SUCCESS") r.pass++;
      else if (c.status === "FAILURE") {
        r.fail++;
        if (!r.failing.includes(c.id)) r.failing.push(c.id);
      } else if (c.status === "WARNING") {
        r.warn++;
        const label = `${c.id}(warning)`;
        if (!r.failing.includes(label)) r.failing.push(label);
      } else if (c.status === "SKIPPED") r.skip++;
    }
    r.result = r.fail === 0 ? "PASS" : "FAIL";
    const s = summary[name];
    if (s && (s.passed !== r.pass || s.failed !== r.fail)) r.note = `stdout says ${s.passed}/${s.failed}`;
  } else if (summary[name]) {
    // the suite synthesises a FAILURE (and writes no checks.json) when a scenario throws
    const s = summary[name];
    Object.assign(r, {
      result: s.failed === 0 ? "PASS" : "FAIL",
      pass: s.passed,
      fail: s.failed,
      note: "no checks.json (scenario threw); from stdout",
    });
  }
  return r;
}

const rows = [
  ...scored.map((n) => ({ ...verdict(n), scored: "yes" })),
  ...notScored.map((e) => ({ ...verdict(e.scenario), scored: `no: ${e.reason}` })),
];

const w = Math.max(8, ...rows.map((r) => r.name.length));
const sw = Math.max(6, ...rows.map((r) => r.scored.length));
const pad = (s, n) => String(s).padEnd(n);
console.log(`MCP conformance ${suiteVersion}, requirements ${REV}, server ${URL}`);
console.log(`results: ${OUT}  (suite exit ${SUITE_RC}, ${ELAPSED}s)`);
console.log("");
console.log(`${pad("scenario", w)}  ${pad("scored", sw)}  ${pad("result", 7)} checks(pass/fail/warn/skip)  failing checks`);
console.log("-".repeat(w + sw + 60));
for (const r of rows) {
  const checks = `${r.pass}/${r.fail}/${r.warn}/${r.skip}`;
  const note = r.note ? ` [${r.note}]` : "";
  const line = `${pad(r.name, w)}  ${pad(r.scored, sw)}  ${pad(r.result, 7)} ${pad(checks, 28)} ${r.failing.join(",")}${note}`;
  console.log(line.trimEnd());
}
console.log("");

// --- the gate ---
const baseline = new Set(
  read(BASELINE_FILE || "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#")),
);
const requiredNotScored = new Set((REQUIRED_NOT_SCORED || "").split(/\s+/).filter(Boolean));
const known = new Set(rows.map((r) => r.name));
const problems = [];
for (const name of baseline) {
  if (!known.has(name)) problems.push(`${name}: in ${path.basename(BASELINE_FILE)} but not a scenario of ${REV}`);
}
let gated = 0;
for (const r of rows) {
  if (r.scored !== "yes" && !requiredNotScored.has(r.name)) continue;
  gated++;
  if (baseline.has(r.name)) {
    if (r.result === "PASS" && r.warn === 0) problems.push(`${r.name}: passes now; remove it from ${path.basename(BASELINE_FILE)}`);
    else console.log(`conformance gate: ${r.name}: ${r.result} (expected, listed in ${path.basename(BASELINE_FILE)})`);
    continue;
  }
  if (r.result !== "PASS") problems.push(`${r.name}: ${r.result}`);
  else if (r.warn) problems.push(`${r.name}: ${r.warn} WARNING check(s)`);
}
if (gated === 0) problems.push("no scenario rows");
for (const p of problems) console.log(`conformance gate: ${p}`);
console.log(`conformance gate: ${problems.length ? `${problems.length} problem(s)` : "OK"}`);

const sc = rows.filter((r) => r.scored === "yes");
const ns = rows.filter((r) => r.scored !== "yes");
const scPass = sc.filter((r) => r.result === "PASS").length;
const nsPass = ns.filter((r) => r.result === "PASS").length;
const missing = rows.filter((r) => r.result === "MISSING").length;
console.log(`conformance ${REV}: ${scPass} passed, ${sc.length - scPass} failed`);
console.log(`not scored: ${nsPass} passed, ${ns.length - nsPass} failed`);

// usable iff the suite finished (summary printed) or every scenario left a result
if (!haveSummary && missing > 0) {
  console.error(`conformance ${REV}: INCOMPLETE, ${missing} scenario(s) without a result`);
  process.exit(5);
}
process.exit(problems.length ? 1 : 0);
