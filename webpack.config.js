// Builds the extension into dist/: one bundle per entry, plus manifest.json and extension/ assets;
// and, for the host's `protolens replay`, the recorder core as one node script: dist/node/replay.cjs
// (outside the extension: scripts/package_extension.py leaves dist/node/ out of its zip).
import CopyPlugin from "copy-webpack-plugin";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));

const tsRule = { test: /\.ts$/, loader: "ts-loader", options: { transpileOnly: true, compilerOptions: { noEmit: false, allowImportingTsExtensions: false } } };

const extension = {
  entry: {
    background: "./src/adapters/service-worker.ts",
    popup: "./src/ui/popup.ts",
    options: "./src/ui/options.ts",
    dashboard: "./src/dashboard/page.ts",
    waterfall: "./src/waterfall/page.ts",
  },
  output: { path: resolve(root, "dist"), filename: "[name].js", clean: { keep: /^node\// } },
  resolve: { extensions: [".ts", ".js"], extensionAlias: { ".js": [".ts", ".js"] } },
  module: {
    rules: [tsRule],
  },
  devtool: false,
  optimization: { minimize: false },
  performance: { hints: false },
  plugins: [
    new CopyPlugin({ patterns: [{ from: "manifest.json" }, { from: "extension", to: "." }] }),
  ],
};

const replay = {
  target: "node20",
  entry: { replay: "./src/replay/cli.ts" },
  output: { path: resolve(root, "dist/node"), filename: "[name].cjs", clean: true },
  resolve: extension.resolve,
  module: { rules: [tsRule] },
  devtool: false,
  optimization: { minimize: false },
  performance: { hints: false },
};

export default [extension, replay];
