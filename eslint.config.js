// Lint: typescript-eslint strict + type-checked rules. Only src/adapters/ and src/ui/ may touch
// chrome.* APIs with side effects (debugger, native messaging, storage, proxy) and the clock;
// the recorder core (src/cdp/) and every other pure module are replayable from a log.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

const ADAPTER_ONLY = [
  { object: "chrome", property: "debugger", message: "chrome.debugger only in src/adapters/" },
  { object: "chrome", property: "runtime", message: "chrome.runtime only in src/adapters/ or src/ui/" },
  { object: "chrome", property: "storage", message: "chrome.storage only in src/adapters/" },
  { object: "chrome", property: "proxy", message: "chrome.proxy only in src/adapters/" },
  { object: "chrome", property: "tabs", message: "chrome.tabs only in src/adapters/" },
  { object: "browser", property: "storage", message: "storage only in src/adapters/" },
  { object: "Date", property: "now", message: "time comes in as an argument (STYLE.md rule zero)" },
  { object: "performance", property: "now", message: "time comes in as an argument (STYLE.md rule zero)" },
];

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", ".venv/", "native-host/", "scripts/devkit/", "tests/e2e/", "**/*.py"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.browser, ...globals.serviceworker, ...globals.node },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-confusing-void-expression": "off",
      "@typescript-eslint/no-unnecessary-condition": "off",
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/adapters/**", "src/ui/**"],
    rules: {
      "no-restricted-properties": ["error", ...ADAPTER_ONLY],
      "no-restricted-globals": ["error",
        { name: "chrome", message: "chrome.* only in src/adapters/ (and src/ui/)" },
        { name: "browser", message: "browser.* only in src/adapters/ (and src/ui/)" },
        { name: "localStorage", message: "storage only in src/adapters/" },
        { name: "indexedDB", message: "storage only in src/adapters/" },
      ],
      "no-restricted-imports": ["error", { paths: [{ name: "webextension-polyfill", message: "only in src/adapters/ and src/ui/" }] }],
    },
  },
  {
    files: ["src/ui/**/*.ts"],
    rules: {
      "no-restricted-properties": ["error",
        { object: "chrome", property: "debugger", message: "chrome.debugger only in src/adapters/" },
        { object: "chrome", property: "proxy", message: "chrome.proxy only in src/adapters/" },
        { property: "innerHTML", message: "page data is text: use textContent" },
        { property: "outerHTML", message: "page data is text: use textContent" },
      ],
    },
  },
  {
    // the dashboard page draws the host's strings: text and canvas only, never markup
    files: ["src/dashboard/**/*.ts"],
    rules: {
      "no-restricted-properties": ["error", ...ADAPTER_ONLY,
        { property: "innerHTML", message: "page data is text: use textContent" },
        { property: "outerHTML", message: "page data is text: use textContent" },
        { property: "insertAdjacentHTML", message: "page data is text: use textContent" },
      ],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
