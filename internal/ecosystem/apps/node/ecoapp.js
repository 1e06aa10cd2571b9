// Shared by the Node apps of the ecosystem suite: steps run in order; the
// first that throws prints "FAIL <step>: <error>" and exits 1.
'use strict';
const url = process.env.DATABASE_URL;

function check(cond, what) {
  if (!cond) throw new Error(what);
}

async function run(steps, cleanup) {
  let code = 0;
  for (const [name, fn] of steps) {
    try {
      await fn();
      console.log('ok', name);
    } catch (e) {
      console.log(e && e.stack ? e.stack : e);
      const code_ = e && e.code ? ` (${e.code})` : '';
      console.log(`FAIL ${name}: ${String(e && e.message ? e.message : e).split(/\s+/).join(' ')}${code_}`);
      code = 1;
      break;
    }
  }
  if (cleanup) {
    try { await cleanup(); } catch (e) { /* the failure above is what counts */ }
  }
  process.exit(code);
}

module.exports = { url, check, run };
