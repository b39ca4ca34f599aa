// Drive the audit page in headless Chromium like a labeller: click a button per answer,
// type a name, click "Save labels", and write the downloaded file where asked.
// usage: node label_audit_page.js PAGE_PATH PLAN_JSON OUT_PATH   (PLAN: {"id": {"correct": true, ...}})
const { onPage, save } = require("./page.js");

const [pagePath, planJson, outPath] = process.argv.slice(2);
const plan = JSON.parse(planJson);
onPage(pagePath, async page => {
  const shown = await page.locator("section.item").count();
  for (const [id, labels] of Object.entries(plan)) {
    const item = page.locator(`section.item[data-id="${id}"]`);
    for (const [key, value] of Object.entries(labels)) {
      await item.locator(`button[data-label="${key}"][data-value="${value}"]`).click();
    }
  }
  await page.fill("#labeller", "ana");
  const progress = await page.textContent("#progress");
  const filename = await save(page, "#save", outPath);
  const items = {};
  for (const section of await page.locator("section.item").all()) {
    items[await section.getAttribute("data-id")] = await section.innerText();
  }
  return { shown, progress, filename, text: await page.locator("main").innerText(), items };
}).catch(e => { console.error(e); process.exit(3); });
