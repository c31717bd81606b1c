// The example's page: settings and context come from the form (which submits to this page, so
// they also work as a query string: ?key=vane_pk_…&userId=…), a local-mode client resolves, and
// the button tracks a click and flushes. document.body.dataset.state says where the page is.
import { createClient } from "/client/vane-client.js";

const form = document.querySelector("#settings");
const statusLine = document.querySelector("#status");

fillForm(new URLSearchParams(location.search));
if (form.elements.key.value) start().catch(showError);

async function start() {
  const settings = Object.fromEntries(new FormData(form));
  setState("loading", "Fetching the bundle…");
  const client = await createClient({
    baseUrl: settings.server,
    apiKey: settings.key.trim(),
    projectId: settings.project,
    env: settings.env,
    mode: "local",
    onError: showError,
  });
  const started = performance.now();
  const result = await client.resolve(contextFrom(settings));
  const tookMs = performance.now() - started;
  showResult(result);
  setState("resolved", `Bundle ${client.configVersion}, resolved in this page in ${tookMs.toFixed(2)} ms.`);
  let clicks = 0;
  document.querySelector("#track").onclick = async () => {
    client.track("click", { decisionId: result.decisionId, properties: { button: "track", page: location.pathname } });
    await client.flush();
    clicks += 1;
    document.querySelector("#tracked").textContent = `${clicks} click${clicks === 1 ? "" : "s"} sent with the exposures.`;
    document.body.dataset.clicks = String(clicks);
  };
}

/** The context fields this page has; empty ones are left out (a missing unit skips its layers). */
function contextFrom(settings) {
  const context = {};
  for (const field of ["userId", "accountId", "country"]) if (settings[field]) context[field] = settings[field];
  return context;
}

function fillForm(query) {
  for (const [name, value] of query) if (form.elements[name]) form.elements[name].value = value;
  if (!form.elements.userId.value) form.elements.userId.value = visitorId();
}

/** A random id kept in this browser, so a visitor keeps their assignments across reloads. */
function visitorId() {
  let id = localStorage.getItem("vane-example-user");
  if (!id) localStorage.setItem("vane-example-user", (id = `visitor-${crypto.randomUUID().slice(0, 8)}`));
  return id;
}

function showResult(result) {
  const assignments = Object.entries(result.assignments).map(([key, value]) => [key, code(JSON.stringify(value))]);
  const layers = result.metadata.layers.map((l) => [l.layerId, String(l.bucket), l.policyId ?? "—", l.allocationName ?? "(defaults)"]);
  fillTable("#assignments", assignments);
  fillTable("#layers", layers);
  document.querySelector("#result").hidden = false;
}

function fillTable(selector, rows) {
  const body = document.querySelector(`${selector} tbody`);
  body.replaceChildren(...rows.map((cells) => {
    const row = document.createElement("tr");
    row.append(...cells.map((cell) => {
      const td = document.createElement("td");
      td.append(cell);
      return td;
    }));
    return row;
  }));
}

function code(text) {
  const element = document.createElement("code");
  element.textContent = text;
  return element;
}

function setState(state, message) {
  document.body.dataset.state = state;
  statusLine.textContent = message;
  statusLine.dataset.kind = state === "error" ? "error" : "info";
}

function showError(error) {
  setState("error", error instanceof Error ? error.message : String(error));
}
