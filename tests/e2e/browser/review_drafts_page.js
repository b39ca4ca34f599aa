// Drive the draft review page in headless Chromium like a reviewer: edit fields, approve or reject,
// type a name, click "Save reviewed drafts", and write the downloaded file where asked.
// usage: node review_drafts_page.js PAGE_PATH PLAN_JSON OUT_PATH
//   PLAN: {"id": {"decision": "approve" | "reject", "question"?: "...", "reference"?: "...", "keywords"?: ["..."],
//                 "doc_id"?: ["corpus"], "sources"?: ["corpus/doc.md"], "expect"?: "answer" | "refusal", "tags"?: ["..."]}}
const { onPage, save } = require("./page.js");

const [pagePath, planJson, outPath] = process.argv.slice(2);
const plan = JSON.parse(planJson);
onPage(pagePath, async page => {
  const shown = await page.locator("section.item").count();
  const checks = {};
  // The documents offered to the first draft before any edit: its corpus's.
  const choices = await page.locator("section.item").first().locator('select[name="sources"] option').allTextContents();
  for (const [id, review] of Object.entries(plan)) {
    const item = page.locator(`section.item[data-id="${id}"]`);
    for (const name of ["question", "reference"]) {
      if (name in review) await item.locator(`textarea[name="${name}"]`).fill(review[name]);
    }
    if ("keywords" in review) await item.locator('textarea[name="keywords"]').fill(review.keywords.join("\n"));
    if ("doc_id" in review) {
      for (const box of await item.locator('input[name="doc_id"]').all()) await box.setChecked(review.doc_id.includes(await box.getAttribute("value")));
    }
    if ("sources" in review) await item.locator('select[name="sources"]').selectOption(review.sources);
    if ("expect" in review) await item.locator('select[name="expect"]').selectOption(review.expect);
    if ("tags" in review) await item.locator('input[name="tags"]').fill(review.tags.join(", "));
    checks[id] = await item.locator(".check").textContent();
    if (review.decision) await item.locator(`button[data-decision="${review.decision}"]`).click();
  }
  await page.fill("#reviewer", "ana");
  const progress = await page.textContent("#progress");
  const filename = await save(page, "#save", outPath);
  return { shown, progress, checks, filename, choices, text: await page.locator("main").innerText(),
           pwned: await page.evaluate(() => document.body.getAttribute("data-pwned")) };
}).catch(e => { console.error(e); process.exit(3); });
