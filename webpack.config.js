// Builds the extension into dist/: one bundle per entry, plus manifest.json and extension/ assets.
import CopyPlugin from "copy-webpack-plugin";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));

export default {
  entry: {
    background: "./src/adapters/service-worker.ts",
    popup: "./src/ui/popup.ts",
    options: "./src/ui/options.ts",
    dashboard: "./src/dashboard/page.ts",
    waterfall: "./src/waterfall/page.ts",
  },
  output: { path: resolve(root, "dist"), filename: "[name].js", clean: true },
  resolve: { extensions: [".ts", ".js"], extensionAlias: { ".js": [".ts", ".js"] } },
  module: {
    rules: [{ test: /\.ts$/, loader: "ts-loader", options: { transpileOnly: true, compilerOptions: { noEmit: false, allowImportingTsExtensions: false } } }],
  },
  devtool: false,
  optimization: { minimize: false },
  performance: { hints: false },
  plugins: [
    new CopyPlugin({ patterns: [{ from: "manifest.json" }, { from: "extension", to: "." }] }),
  ],
};
