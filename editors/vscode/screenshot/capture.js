// Photographs a running code-server with the sjoin extension: opens a spec, waits for the
// server's diagnostic (its squiggle), opens the Problems panel, hovers over the join's name
// until its plan shows, and writes a PNG. Driven by playwright-core with the system Chromium.
// Usage: node capture.js URL FILE JOIN_NAME OUT.png   (PLAYWRIGHT: playwright-core's folder;
// CHROMIUM: the browser, default /usr/bin/chromium). Writes what it saw to stdout as JSON:
// the squiggles, the Problems panel's rows and the hover's text, for the caller to check.
"use strict";
const { chromium } = require(process.env.PLAYWRIGHT || "playwright-core");

const WAIT = 180000;

async function main() {
  const [url, file, joinName, out] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 1040 } });
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: WAIT });
    await page.waitForSelector(".monaco-workbench .part.editor", { timeout: WAIT });
    await page.waitForTimeout(3000); // the workbench restores its layout
    // open the file from the Explorer, as a user does
    const entry = page.locator(".explorer-folders-view .monaco-list-row", { hasText: file }).first();
    await entry.waitFor({ timeout: WAIT });
    await entry.click();
    await page.waitForSelector(".monaco-editor .view-lines", { timeout: WAIT });
    await page.keyboard.press("Control+B"); // the side bar closed: the editor's full width
    await page.waitForSelector(".monaco-editor .view-lines", { timeout: WAIT });
    // the language server's diagnostic: its squiggle
    await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: WAIT });
    // the Problems panel
    await page.keyboard.press("Control+Shift+M");
    await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: WAIT });
    const problems = await page.locator(".markers-panel .monaco-list-row").allInnerTexts();
    // hover over the join's name, where the join is defined
    const word = page.locator(".monaco-editor .view-line span span", { hasText: new RegExp(`^${joinName}$`) }).first();
    await word.waitFor({ timeout: WAIT });
    const box = await word.boundingBox();
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 5 });
    const hover = page.locator(".monaco-hover .hover-contents, .monaco-hover .rendered-markdown").first();
    await hover.waitFor({ state: "visible", timeout: WAIT });
    await page.waitForTimeout(800);
    const hoverText = await page.locator(".monaco-hover").first().innerText();
    const squiggles = await page.locator(".monaco-editor .squiggly-error").count();
    await page.screenshot({ path: out });
    process.stdout.write(JSON.stringify({ squiggles, problems, hover: hoverText }) + "\n");
  } catch (error) {
    await page.screenshot({ path: out.replace(/\.png$/, "") + ".failed.png" }).catch(() => {});
    throw error;
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  process.stderr.write(`capture.js: ${error.stack || error}\n`);
  process.exit(1);
});
