// Open one of rag-ci's static pages in headless Chromium, recording every request, page error and
// dialog, then hand the page to `drive`; prints what `drive` returns with those records, as JSON.
const { chromium } = require("playwright-core");

async function onPage(pagePath, drive) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
  const requests = [];
  const errors = [];
  try {
    const context = await browser.newContext({ acceptDownloads: true });
    const page = await context.newPage();
    page.on("request", r => requests.push(r.url()));
    page.on("pageerror", e => errors.push(String(e)));
    page.on("dialog", d => { errors.push("dialog: " + d.message()); d.dismiss(); });
    await page.goto("file://" + pagePath);
    const seen = await drive(page);
    console.log(JSON.stringify({ ...seen, requests, errors }));
  } finally {
    await browser.close();
  }
}

async function save(page, button, outPath) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
  await download.saveAs(outPath);
  return download.suggestedFilename();
}

module.exports = { onPage, save };
