// Renders a .sjoin spec as VS Code shows it with this extension: the TextMate grammar's tokens
// (vscode-textmate and vscode-oniguruma, the libraries VS Code itself tokenizes with) in the
// Dark+ theme's colours, a diagnostic's squiggle, its hover and the Problems panel, to HTML.
// Usage: node render.js SPEC DIAGNOSTICS.json OUT.html   (diagnostics: `sjoin check --format json`)
"use strict";
const fs = require("fs");
const path = require("path");
const vsctm = require("vscode-textmate");
const oniguruma = require("vscode-oniguruma");

const GRAMMAR = path.join(__dirname, "..", "syntaxes", "sjoin.tmLanguage.json");
// Dark+ (VS Code's default dark theme): scope prefix -> colour; the longest prefix wins
const THEME = {
  "comment": "#6A9955",
  "string": "#CE9178",
  "constant.character.escape": "#D7BA7D",
  "constant.numeric": "#B5CEA8",
  "constant.language": "#569CD6",
  "keyword": "#569CD6",
  "keyword.other.statement": "#C586C0",
  "keyword.other.join": "#C586C0",
  "keyword.other.unit": "#4EC9B0",
  "keyword.operator": "#D4D4D4",
  "keyword.operator.logical": "#569CD6",
  "storage.type": "#569CD6",
  "entity.name.type": "#4EC9B0",
  "support.type": "#4EC9B0",
  "support.function": "#DCDCAA",
  "support.variable": "#9CDCFE",
  "variable": "#9CDCFE",
  "variable.other.alias": "#9CDCFE",
};

function colour(scopes) {
  let best = "", found = "#D4D4D4";
  for (const scope of scopes) {
    for (const [prefix, value] of Object.entries(THEME)) {
      if ((scope === prefix || scope.startsWith(prefix + ".")) && prefix.length >= best.length) {
        best = prefix;
        found = value;
      }
    }
  }
  return found;
}

const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

async function main() {
  const [specPath, diagnosticsPath, outPath] = process.argv.slice(2);
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) =>
      scope === "source.sjoin" ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, "utf8"), GRAMMAR) : null,
  });
  const grammar = await registry.loadGrammar("source.sjoin");
  const lines = fs.readFileSync(specPath, "utf8").replace(/\n$/, "").split("\n");
  const diagnostics = JSON.parse(fs.readFileSync(diagnosticsPath, "utf8")).diagnostics;
  let stack = vsctm.INITIAL;
  const rows = [];
  lines.forEach((line, i) => {
    const result = grammar.tokenizeLine(line, stack);
    stack = result.ruleStack;
    const here = diagnostics.filter((d) => d.line === i + 1);
    let html = "";
    for (const t of result.tokens) {
      const text = line.slice(t.startIndex, t.endIndex);
      // a diagnostic's columns are 1-based, end exclusive: split tokens at its edges
      const cuts = new Set([t.startIndex, t.endIndex]);
      for (const d of here) {
        for (const c of [d.col - 1, d.end_col - 1]) if (c > t.startIndex && c < t.endIndex) cuts.add(c);
      }
      const edges = [...cuts].sort((a, b) => a - b);
      for (let k = 0; k + 1 < edges.length; k++) {
        const piece = line.slice(edges[k], edges[k + 1]);
        const squiggle = here.some((d) => edges[k] >= d.col - 1 && edges[k] < d.end_col - 1);
        html += `<span style="color:${colour(t.scopes)}"${squiggle ? ' class="error"' : ""}>${esc(piece)}</span>`;
      }
      void text;
    }
    rows.push({ number: i + 1, html, hover: here[0] });
  });
  const name = path.basename(specPath);
  const d = diagnostics[0];
  const hoverBox = (x) => `
    <div class="hover" style="left:${66 + (x.col - 1) * 8.43}px">
      <div>${esc(x.message)}<br>${esc(x.label)}<br>help: ${esc(x.help)}</div>
      <div class="src">sjoin(<u>${esc(x.code)}</u>) [Ln ${x.line}, Col ${x.col}]</div>
      <div class="actions">View Problem (Alt+F8)&nbsp;&nbsp;&nbsp;Quick Fix... (Ctrl+.)</div>
    </div>`;
  const body = rows
    .map((r) => `<div class="line"><span class="num">${r.number}</span><span class="code">${r.html || " "}</span>` +
      (r.hover ? hoverBox(r.hover).replace(/\n\s*/g, "") : "") + "</div>")
    .join("\n");
  const problems = diagnostics
    .map((x) => `<div class="problem"><span class="icon">&#x2297;</span> ${esc(x.message)} sjoin(${esc(x.code)}) [Ln ${x.line}, Col ${x.col}]</div>`)
    .join("");
  fs.writeFileSync(outPath, `<!doctype html><html><head><meta charset="utf-8"><style>
    body { margin:0; background:#1E1E1E; font-family: "DejaVu Sans Mono", monospace; font-size:14px; color:#D4D4D4; }
    .title { background:#3C3C3C; color:#CCCCCC; font-family:"DejaVu Sans",sans-serif; font-size:12px; padding:6px 12px; text-align:center; }
    .tabs { background:#252526; font-family:"DejaVu Sans",sans-serif; font-size:13px; }
    .tab { display:inline-block; background:#1E1E1E; color:#FFFFFF; padding:8px 16px; border-top:1px solid #007ACC; }
    .tab .lang { color:#F48771; }
    .editor { padding:6px 0 96px; }
    .line { white-space:pre; line-height:19px; }
    .num { display:inline-block; width:44px; text-align:right; padding-right:22px; color:#858585; }
    .error { text-decoration: underline wavy #F14C4C; text-decoration-skip-ink:none; text-underline-offset:3px; }
    .line { position:relative; }
    .hover { position:absolute; top:21px; z-index:1; box-shadow:0 2px 8px #000; background:#252526; border:1px solid #454545;
             font-family:"DejaVu Sans",sans-serif; font-size:13px; line-height:18px; white-space:normal; max-width:560px; }
    .hover > div { padding:4px 8px; }
    .hover .src { color:#9D9D9D; }
    .hover .actions { border-top:1px solid #454545; color:#3794FF; }
    .panel { border-top:1px solid #454545; font-family:"DejaVu Sans",sans-serif; font-size:13px; }
    .panel .head { padding:6px 12px; color:#E7E7E7; text-transform:uppercase; font-size:11px; }
    .problem { padding:3px 24px; }
    .icon { color:#F14C4C; }
    .status { background:#007ACC; color:#FFF; font-family:"DejaVu Sans",sans-serif; font-size:12px; padding:3px 12px; }
  </style></head><body>
  <div class="title">${esc(name)} &mdash; sjoin</div>
  <div class="tabs"><span class="tab"><span class="lang">&#x25C6;</span> ${esc(name)}</span></div>
  <div class="editor">${body}</div>
  <div class="panel"><div class="head">Problems <span style="background:#4D4D4D;border-radius:8px;padding:0 6px">${diagnostics.length}</span></div>${problems}</div>
  <div class="status">&#x2297; ${diagnostics.length} &nbsp; Ln ${d ? d.line : 1}, Col ${d ? d.col : 1} &nbsp; sjoin</div>
  </body></html>`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
