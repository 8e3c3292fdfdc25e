import * as path from "node:path";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
// Kept across restarts: the client only listens to the watchers it is given
// and never disposes them, so one pair serves every client we start.
let watchers: vscode.FileSystemWatcher[] = [];

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  watchers = [
    // Every .md, not only templates/ and snippets/: promptpack.toml may put
    // those folders elsewhere, and the server decides what belongs to the tree.
    vscode.workspace.createFileSystemWatcher("**/*.md"),
    // A changed promptpack.toml changes folders and delimiters for every prompt.
    vscode.workspace.createFileSystemWatcher("**/promptpack.toml"),
  ];
  context.subscriptions.push(...watchers);

  context.subscriptions.push(
    vscode.commands.registerCommand("promptpack.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration((event) => {
      // The command line is fixed when the server starts; trace.server is
      // not listed because the client follows that setting by itself.
      if (
        event.affectsConfiguration("promptpack.path") ||
        event.affectsConfiguration("promptpack.root")
      ) {
        void restart();
      }
    }),
  );

  await start();
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const config = vscode.workspace.getConfiguration("promptpack");
  const command = config.get<string>("path") || "promptpack";
  const root = resolveRoot(config.get<string>("root") ?? "");

  const serverOptions: ServerOptions = {
    command,
    args: ["lsp", ...(root ? ["--root", root] : [])],
    transport: TransportKind.stdio,
  };

  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "markdown", pattern: "**/{templates,snippets}/**/*.md" },
      // No language: the id of a .toml file depends on which other
      // extensions are installed ("toml" or "plaintext").
      { scheme: "file", pattern: "**/promptpack.toml" },
    ],
    synchronize: { fileEvents: watchers },
  };

  // The id "promptpack" makes the client read promptpack.trace.server and
  // name its output channel after it.
  const next = new LanguageClient("promptpack", "promptpack", serverOptions, clientOptions);
  client = next;
  try {
    await next.start();
  } catch (error) {
    // Most often the binary is missing: say which setting to fix rather
    // than leave only the client's generic "couldn't start" message.
    const message = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(
      `promptpack: could not start \`${command} lsp\` (${message}). ` +
        "Install it with `cargo install --path crates/promptpack-cli --features full` or set promptpack.path.",
    );
  }
}

async function stop(): Promise<void> {
  const current = client;
  client = undefined;
  if (current === undefined) {
    return;
  }
  try {
    await current.stop();
  } catch {
    // A server that never started (or already died) cannot be stopped;
    // nothing is left to clean up.
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

/** A relative root is meant from the workspace, not from VS Code's own working folder. */
function resolveRoot(root: string): string {
  const trimmed = root.trim();
  if (trimmed === "" || path.isAbsolute(trimmed)) {
    return trimmed;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? path.join(folder.uri.fsPath, trimmed) : trimmed;
}
