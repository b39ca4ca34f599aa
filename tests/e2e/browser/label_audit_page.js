// Drive the audit page in headless Chromium like a labeller: click a button per answer,
// type a name, click "Save labels", and write the downloaded file where asked.
// usage: node label_audit_page.js PAGE_PATH PLAN_JSON OUT_PATH   (PLAN: {"id": {"correct": true, ...}})
const { chromium } = require("playwright-core");

(async () => {
  const [pagePath, planJson, outPath] = process.argv.slice(2);
  const plan = JSON.parse(planJson);
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
    const shown = await page.locator("section.item").count();
    for (const [id, labels] of Object.entries(plan)) {
      const item = page.locator(`section.item[data-id="${id}"]`);
      for (const [key, value] of Object.entries(labels)) {
        await item.locator(`button[data-label="${key}"][data-value="${value}"]`).click();
      }
    }
    await page.fill("#labeller", "ana");
    const progress = await page.textContent("#progress");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#save")]);
    await download.saveAs(outPath);
    const items = {};
    for (const section of await page.locator("section.item").all()) {
      items[await section.getAttribute("data-id")] = await section.innerText();
    }
    console.log(JSON.stringify({ shown, progress, requests, errors, filename: download.suggestedFilename(),
                                 text: await page.locator("main").innerText(), items }));
  } finally {
    await browser.close();
  }
})().catch(e => { console.error(e); process.exit(3); });
