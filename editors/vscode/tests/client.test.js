// Loads the compiled client (out/extension.js) with a stand-in `vscode` module and a
// LanguageClient that records its options, and prints, as JSON, what the extension would
// start for the settings given in argv[2] (JSON): the command, its arguments, the documents
// and the initialization options. Run by tests/editor/test_vscode_grammar.py after `tsc`.
"use strict";
const Module = require("module");
const path = require("path");

const settings = JSON.parse(process.argv[2] || "{}");
const started = [];
const vscode = {
  workspace: {
    workspaceFolders: [{ uri: { fsPath: "/work/project" } }],
    getConfiguration: () => ({ get: (key, fallback) => (key in settings ? settings[key] : fallback) }),
    onDidChangeConfiguration: () => ({ dispose() {} }),
  },
  window: {
    createOutputChannel: (name) => ({ name }),
    showErrorMessage: async (message) => started.push({ error: message }),
  },
  commands: { registerCommand: (name) => ({ name, dispose() {} }) },
};
const TransportKind = { stdio: 0, ipc: 1, pipe: 2, socket: 3 };
class LanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    this.record = { id, name, serverOptions, clientOptions };
  }
  async start() {
    const { serverOptions, clientOptions } = this.record;
    // the arguments the process gets: vscode-languageclient's node client appends `--stdio`
    // for TransportKind.stdio, `--pipe=...` or `--socket=...` for the others
    const transport = serverOptions.transport;
    const extra =
      transport === undefined ? [] : transport === TransportKind.stdio ? ["--stdio"] : [`--transport=${JSON.stringify(transport)}`];
    started.push({
      command: serverOptions.command,
      args: [...(serverOptions.args || []), ...extra],
      documentSelector: clientOptions.documentSelector,
      initializationOptions: clientOptions.initializationOptions,
    });
  }
  async stop() {}
}
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === "vscode") return vscode;
  if (request === "vscode-languageclient/node") return { LanguageClient, TransportKind };
  return load.call(this, request, parent, isMain);
};
const extension = require(path.join(__dirname, "..", "out", "extension.js"));
const subscriptions = [];
extension.activate({ subscriptions }).then(() => {
  console.log(JSON.stringify({ started, subscriptions: subscriptions.map((s) => s.name || "listener") }));
});
