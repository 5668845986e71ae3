// The Workload Map dashboard: a workloads table (filters, search, GPU columns, paged on the server), a workload
// page (the tree with pods, nodes and reasons, and the resources table) and a definitions page, over the JSON API
// (/api/v1/...), redrawn when the server-sent event stream (/api/v1/events) says the watch saw a change.
// Every value from the cluster is put in the page as text (textContent), never as HTML.
"use strict";

const PAGE = 50;
const FINISHED = new Set(["Succeeded", "Failed"]);
const state = { continueAt: "0", filters: { namespace: "", kind: "", phase: "", q: "" } };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function getJSON(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) {
    const error = new Error(body.message || response.statusText);
    error.status = response.status;
    throw error;
  }
  return body;
}

// --- signing in (wmap serve --user-tokens): the token goes once to the server, which keeps it in an HttpOnly cookie

function signIn(message) {
  const input = el("input", { id: "token", type: "password", autocomplete: "off", placeholder: "bearer token", size: "60" });
  const button = el("button", { type: "submit", id: "sign-in", text: "sign in" });
  const status = el("p", { class: "reason", id: "sign-in-error" });
  const form = el("form", { id: "session" }, input, " ", button, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const response = await fetch("/api/v1/session", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token: input.value.trim() }),
    });
    if (response.ok) {
      location.reload();
    } else {
      status.textContent = (await response.json()).message;
    }
  });
  show(el("h1", { text: "Sign in" }),
    el("p", { class: "muted", text: `${message}. This server shows what your Kubernetes token may list.` }), form);
}

function show(...nodes) {
  const main = document.getElementById("main");
  main.replaceChildren(...nodes);
}

function walk(nodes, visit, depth = 0) {
  for (const node of nodes || []) {
    visit(node, depth);
    walk(node.children, visit, depth + 1);
  }
}

function allPods(view) {
  const pods = [];
  walk(view.components, (node) => pods.push(...(node.pods || [])));
  return pods.concat(view.unclaimedPods || []);
}

function gpusHeld(view) {
  return allPods(view)
    .filter((pod) => pod.node && !FINISHED.has(pod.phase))
    .reduce((sum, pod) => sum + pod.resources.gpus, 0);
}

function otherAccelerators(resources) {
  return Object.entries(resources.accelerators || {}).map(([name, count]) => `${name}: ${count}`).join(", ");
}

function workloadHref(view) {
  return `#/w/${encodeURIComponent(view.namespace)}/${encodeURIComponent(view.kind)}/${encodeURIComponent(view.name)}`;
}

function options(select, values, chosen) {
  select.replaceChildren(el("option", { value: "", text: `all ${select.dataset.label}` }));
  for (const value of values) {
    const option = el("option", { value, text: value });
    if (value === chosen) option.selected = true;
    select.append(option);
  }
}

// --- the workloads table ------------------------------------------------------------------------------------------

async function workloadsPage() {
  const query = new URLSearchParams({ limit: String(PAGE), continue: state.continueAt });
  for (const [key, value] of Object.entries(state.filters)) if (value) query.set(key, value);
  const list = await getJSON(`/api/v1/workloads?${query}`);
  const filters = el("div", { class: "filters" });
  for (const [key, values] of [["namespace", list.namespaces], ["kind", list.kinds], ["phase", list.phases]]) {
    const select = el("select", { id: `filter-${key}`, "aria-label": key });
    select.dataset.label = key === "kind" ? "kinds" : `${key}s`;
    options(select, values, state.filters[key]);
    select.addEventListener("change", () => {
      state.filters[key] = select.value;
      state.continueAt = "0";
      render();
    });
    filters.append(select);
  }
  const search = el("input", { id: "search", type: "search", placeholder: "search names", value: state.filters.q });
  search.addEventListener("change", () => {
    state.filters.q = search.value.trim();
    state.continueAt = "0";
    render();
  });
  filters.append(search);

  const head = el("tr", {}, ...["namespace", "kind", "name", "phase"].map((h) => el("th", { text: h })),
    ...["pods ready", "pods desired", "GPUs requested", "GPUs held"].map((h) => el("th", { class: "num", text: h })),
    el("th", { text: "other accelerators" }));
  const rows = list.items.map((view) =>
    el("tr", { class: "workload", "data-key": `${view.namespace}/${view.kind}/${view.name}` },
      el("td", { text: view.namespace }),
      el("td", { text: view.kind }),
      el("td", {}, el("a", { href: workloadHref(view), text: view.name })),
      el("td", { class: `phase phase-${view.phase}`, text: view.phase }),
      el("td", { class: "num ready", text: view.replicas.ready ?? "" }),
      el("td", { class: "num desired", text: view.replicas.desired }),
      el("td", { class: "num gpus", text: view.resources.gpus }),
      el("td", { class: "num gpus-held", text: gpusHeld(view) }),
      el("td", { text: otherAccelerators(view.resources) })));
  const table = el("table", { id: "workloads" }, el("thead", {}, head), el("tbody", {}, ...rows));
  const start = Number(state.continueAt);
  const pager = el("div", { class: "pager" },
    el("span", { id: "count", class: "muted",
      text: list.total ? `${start + 1}-${start + list.items.length} of ${list.total} workloads` : "no workloads" }));
  if (start > 0) {
    const previous = el("button", { type: "button", text: "previous" });
    previous.addEventListener("click", () => { state.continueAt = String(Math.max(0, start - PAGE)); render(); });
    pager.append(previous);
  }
  if (list.continue) {
    const next = el("button", { type: "button", id: "next", text: "next" });
    next.addEventListener("click", () => { state.continueAt = list.continue; render(); });
    pager.append(next);
  }
  show(el("h1", { text: "Workloads" }), filters, table, pager);
}

// --- one workload -------------------------------------------------------------------------------------------------

function quantity(resources) {
  const parts = [];
  if (resources.gpus) parts.push(`${resources.gpus} GPU`);
  const other = otherAccelerators(resources);
  if (other) parts.push(other);
  if (resources.cpuMillis) parts.push(`${resources.cpuMillis / 1000} CPU`);
  if (resources.memoryBytes) parts.push(`${(resources.memoryBytes / 2 ** 30).toFixed(1)} GiB`);
  return parts.join(", ");
}

function podItem(pod) {
  return el("li", { class: "pod", "data-pod": pod.name },
    `${pod.name}  ${pod.phase}${pod.ready ? " ready" : ""}  ${pod.node || "<unscheduled>"}`,
    pod.reason ? el("span", { class: "reason", text: `  ${pod.reason}` }) : null);
}

function treeOf(nodes) {
  return el("ul", { class: "tree" }, ...(nodes || []).map((node) => {
    const replicas = node.replicas;
    const label = `${node.name}${node.kind ? ` (${node.kind})` : ""}`;
    const figures = `  ${replicas.ready ?? "-"}/${replicas.current ?? "-"}/${replicas.desired} ready/current/desired`;
    const resources = quantity(node.resources);
    return el("li", { class: "component", "data-component": node.component || node.name },
      el("span", { class: "node", text: label }),
      el("span", { class: "muted", text: figures + (resources ? `, ${resources}` : "") }),
      node.nodes && node.nodes.length ? el("div", { class: "muted", text: `nodes: ${node.nodes.join(", ")}` }) : null,
      node.pods && node.pods.length ? el("ul", { class: "tree pods" }, ...node.pods.map(podItem)) : null,
      node.children && node.children.length ? treeOf(node.children) : null);
  }));
}

function resourcesTable(view) {
  const rows = [];
  walk(view.components, (node, depth) => {
    const own = node.ownResources || node.resources;
    const replicas = node.ownReplicas || node.replicas;
    if (node.children && node.children.length && !node.podBearing && !own.gpus && !own.cpuMillis) return;
    rows.push(el("tr", {},
      el("td", { text: `${"  ".repeat(depth)}${node.name}` }),
      el("td", { class: "num", text: replicas.desired }),
      el("td", { class: "num", text: own.gpus }),
      el("td", { text: otherAccelerators(own) }),
      el("td", { class: "num", text: own.cpuMillis / 1000 }),
      el("td", { class: "num", text: (own.memoryBytes / 2 ** 30).toFixed(1) })));
  });
  return el("table", { id: "resources" },
    el("thead", {}, el("tr", {}, el("th", { text: "component" }), el("th", { class: "num", text: "pods" }),
      el("th", { class: "num", text: "GPUs" }), el("th", { text: "other accelerators" }),
      el("th", { class: "num", text: "CPU" }), el("th", { class: "num", text: "memory GiB" }))),
    el("tbody", {}, ...rows));
}

async function workloadPage(namespace, kind, name) {
  const view = await getJSON(`/api/v1/workloads/${encodeURIComponent(namespace)}/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`);
  const summary = el("table", { class: "summary", id: "summary" }, el("tbody", {},
    ...[["namespace", view.namespace], ["kind", `${view.kind} (${view.apiVersion})`], ["phase", view.phase],
      ["reason", view.reason || ""], ["definition", `${view.definition} (${view.origin})`],
      ["pods", `${view.replicas.ready ?? "-"} ready, ${view.replicas.current ?? "-"} current, ${view.replicas.desired} desired`],
      ["requests", quantity(view.resources)], ["GPUs held", gpusHeld(view)]]
      .map(([key, value]) => el("tr", {}, el("td", { text: key }), el("td", { class: key === "phase" ? `phase-${value}` : "", id: `summary-${key.replace(" ", "-")}`, text: value })))));
  const unclaimed = view.unclaimedPods && view.unclaimedPods.length
    ? [el("h2", { text: "Pods no component claims" }), el("ul", { class: "tree pods" }, ...view.unclaimedPods.map(podItem))]
    : [];
  show(el("h1", { text: `${view.kind} ${view.name}` }), summary, el("h2", { text: "Tree" }),
    el("div", { id: "tree" }, treeOf(view.components)), ...unclaimed,
    el("h2", { text: "Resources" }), resourcesTable(view));
}

// --- definitions --------------------------------------------------------------------------------------------------

async function definitionsPage() {
  const list = await getJSON("/api/v1/definitions");
  const rows = list.items.map((d) => el("tr", { class: d.watched ? "watched" : "" },
    el("td", { text: d.kind }), el("td", { text: d.group || "core" }), el("td", { text: d.version }),
    el("td", { text: d.name }), el("td", { text: d.origin }),
    el("td", { text: d.watched ? "watched" : d.error ? `refused: ${d.error}` : "not served" })));
  show(el("h1", { text: "Definitions" }),
    el("table", { id: "definitions" }, el("thead", {}, el("tr", {},
      ...["kind", "group", "version", "definition", "from", "in this cluster"].map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows)));
}

// --- routing and the live stream ----------------------------------------------------------------------------------

async function render() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    if (parts[0] === "w" && parts.length === 4) await workloadPage(parts[1], parts[2], parts[3]);
    else if (parts[0] === "definitions") await definitionsPage();
    else await workloadsPage();
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  } catch (error) {
    if (error.status === 401) signIn(error.message);
    else show(el("p", { class: "reason", id: "error", text: String(error.message || error) }));
  }
}

function live() {
  const badge = document.getElementById("live");
  const source = new EventSource("/api/v1/events");
  let pending = null;
  source.addEventListener("open", () => { badge.textContent = "live"; badge.classList.add("on"); });
  source.addEventListener("error", () => { badge.textContent = "reconnecting"; badge.classList.remove("on"); });
  source.addEventListener("changed", (event) => {
    document.body.dataset.generation = JSON.parse(event.data).generation;
    if (pending === null) pending = setTimeout(() => { pending = null; render(); }, 200);
  });
}

window.addEventListener("hashchange", render);
document.addEventListener("DOMContentLoaded", () => { render(); live(); });
