// Drive the draft review page in headless Chromium like a reviewer: edit fields, approve or reject,
// type a name, click "Save reviewed drafts", and write the downloaded file where asked.
// usage: node review_drafts_page.js PAGE_PATH PLAN_JSON OUT_PATH
//   PLAN: {"id": {"decision": "approve" | "reject", "question"?: "...", "reference"?: "...", "keywords"?: ["..."]}}
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
    const checks = {};
    for (const [id, review] of Object.entries(plan)) {
      const item = page.locator(`section.item[data-id="${id}"]`);
      for (const name of ["question", "reference"]) {
        if (name in review) await item.locator(`textarea[name="${name}"]`).fill(review[name]);
      }
      if ("keywords" in review) await item.locator('textarea[name="keywords"]').fill(review.keywords.join("\n"));
      checks[id] = await item.locator(".check").textContent();
      if (review.decision) await item.locator(`button[data-decision="${review.decision}"]`).click();
    }
    await page.fill("#reviewer", "ana");
    const progress = await page.textContent("#progress");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#save")]);
    await download.saveAs(outPath);
    console.log(JSON.stringify({ shown, progress, checks, requests, errors, filename: download.suggestedFilename(),
                                 text: await page.locator("main").innerText(),
                                 pwned: await page.evaluate(() => document.body.getAttribute("data-pwned")) }));
  } finally {
    await browser.close();
  }
})().catch(e => { console.error(e); process.exit(3); });
