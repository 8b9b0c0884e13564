// The sjoin extension: starts `<python> -m sjoin lsp` over stdio (sjoin.python, by default
// python3) for .sjoin specs (and a pipeline's .sql files when sjoin.checkPipelineSql is set),
// and restarts it when those settings change.
import * as vscode from "vscode";
import {
  DocumentSelector,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;

// ${workspaceFolder} and a leading ~ in the interpreter's path, as users write them
function interpreter(config: vscode.WorkspaceConfiguration): string {
  let python = config.get<string>("python", "python3").trim() || "python3";
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder !== undefined) {
    python = python.replace(/\$\{workspaceFolder\}/g, folder);
  }
  const home = process.env.HOME ?? process.env.USERPROFILE;
  if (home !== undefined && (python === "~" || python.startsWith("~/"))) {
    python = home + python.slice(1);
  }
  return python;
}

async function start(): Promise<void> {
  const config = vscode.workspace.getConfiguration("sjoin");
  const python = interpreter(config);
  // no `transport`: the client then talks over the process's stdin and stdout as is, whereas
  // TransportKind.stdio would append `--stdio` to the arguments, which `sjoin lsp` refuses
  const serverOptions: ServerOptions = {
    command: python,
    args: ["-m", "sjoin", "lsp"],
  };
  const selector: DocumentSelector = [
    { scheme: "file", language: "sjoin" },
    { scheme: "untitled", language: "sjoin" },
  ];
  if (config.get<boolean>("checkPipelineSql", false)) {
    selector.push({ scheme: "file", language: "sql" });
  }
  output ??= vscode.window.createOutputChannel("sjoin");
  const clientOptions: LanguageClientOptions = {
    documentSelector: selector,
    outputChannel: output,
    initializationOptions: { debounceMs: config.get<number>("debounceMs", 150) },
  };
  client = new LanguageClient("sjoin", "sjoin", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    client = undefined;
    void vscode.window.showErrorMessage(
      `sjoin: could not start '${python} -m sjoin lsp' (${String(error)}). ` +
        "Set sjoin.python to a Python that has sjoin installed: pip install 'sjoin[lsp]'.",
    );
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running !== undefined) {
    await running.stop();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("sjoin.restartServer", async () => {
      await stop();
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (
        event.affectsConfiguration("sjoin.python") ||
        event.affectsConfiguration("sjoin.debounceMs") ||
        event.affectsConfiguration("sjoin.checkPipelineSql")
      ) {
        await stop();
        await start();
      }
    }),
  );
  await start();
}

export function deactivate(): Thenable<void> | undefined {
  return stop();
}
