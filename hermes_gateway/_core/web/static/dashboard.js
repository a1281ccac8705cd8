/* The dashboard: the gateway's state, live over SSE (EventSource), no framework.
   Every value from the server reaches the page through textContent (Console.el): a chat title or a message
   holding "<script>" is shown as text, never parsed as HTML. */
"use strict";
(() => {
  const el = Console.el;
  const $ = (id) => document.getElementById(id);
  let received = 0;   // the browser's clock when the shown snapshot arrived (seconds)
  let inFlight = [];  // the shown replies in flight, to tick their running time between snapshots

  function when(unix) {
    if (!unix) return "–";
    return new Date(unix * 1000).toLocaleString();
  }
  function seconds(s) {
    s = Math.max(0, Math.round(s));
    return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
  }
  function where(p, chat, thread) {
    return `${p}:${chat}` + (thread ? ` / ${thread}` : "");
  }
  function fill(tbodyOf, rows) {  // replace a table's rows; rows are arrays of nodes or strings
    const body = $(tbodyOf).tBodies[0];
    body.replaceChildren(...rows.map((cells) => {
      const tr = el("tr");
      for (const c of cells) { const td = el("td"); td.append(c); tr.append(td); }
      return tr;
    }));
    empty(tbodyOf, rows.length === 0);
  }
  function empty(id, isEmpty) {
    const note = document.querySelector(`.empty[data-for="${id}"]`);
    if (note) note.hidden = !isEmpty;
  }
  function badge(text, cls) { return el("span", `badge ${cls}`, text); }

  /* connected / disconnected (the client said so), starting, running (started, reports nothing), stopped */
  const STATES = {connected: "connected", disconnected: "disconnected", starting: "pending",
                  running: "unknown", stopped: "disabled"};
  function stateBadge(p) {
    const b = badge(p.state, STATES[p.state] || "unknown");
    if (p.connection_error) b.title = p.connection_error;
    return b;
  }
  function renderPlatforms(list) {
    fill("platforms", list.map((p) => {
      const state = !p.enabled ? badge("disabled", "disabled") : stateBadge(p);
      const error = p.last_error ? `${p.last_error} (${when(p.last_error_at)})` : "–";
      const row = [el("strong", "", p.name), state, p.mode || "–", String(p.rate_limited_last_hour), error];
      return row;
    }));
    for (const [i, p] of list.entries()) $("platforms").tBodies[0].rows[i].dataset.platform = p.name;
  }
  function renderInFlight(list) {
    inFlight = list;
    fill("in-flight", list.map((r) => [openLink(r.platform, r.chat_id, r.thread_id),
                                       el("span", "running", seconds(r.running_for)), String(r.calls)]));
  }
  function tick() {  // running times move on between snapshots (one comes only when something changed)
    const body = $("in-flight").tBodies[0];
    const late = Date.now() / 1000 - received;
    inFlight.forEach((r, i) => {
      const cell = body.rows[i] && body.rows[i].querySelector(".running");
      if (cell) cell.textContent = seconds(r.running_for + late);
    });
  }
  function renderPairing(list) {
    $("pairing").replaceChildren(...list.map((p) => {
      const li = el("li");
      li.dataset.user = `${p.platform}:${p.user_id}`;
      li.append(el("div", "who", `${p.platform}:${p.user_id}`),
                el("div", "said", `in chat ${p.chat_id} · code ${p.code} · expires in ${seconds(p.expires_in)}`));
      const actions = el("div", "actions");
      const yes = el("button", "", "Approve");
      const no = el("button", "danger", "Reject");
      yes.addEventListener("click", () => decide("approve", p, li));
      no.addEventListener("click", () => decide("reject", p, li));
      actions.append(yes, no);
      li.append(actions);
      return li;
    }));
    empty("pairing", list.length === 0);
  }
  async function decide(action, p, li) {
    for (const b of li.querySelectorAll("button")) b.disabled = true;
    const r = await Console.post(`/ui/api/pairing/${action}`, { platform: p.platform, user_id: p.user_id });
    if (r.status !== 200) {
      li.append(el("div", "error", (r.body && r.body.error && r.body.error.message) || `failed (${r.status})`));
      for (const b of li.querySelectorAll("button")) b.disabled = false;
      return;
    }
    li.replaceChildren(el("div", "who", `${p.platform}:${p.user_id}`),
                       el("div", "said", action === "approve" ? "approved" : "rejected"));
  }
  function openLink(platform, chat, thread) {
    const a = el("a", "open", where(platform, chat, thread));
    a.href = "#";
    a.addEventListener("click", (e) => { e.preventDefault(); openChat(platform, chat, thread); });
    return a;
  }
  function renderConversations(list) {
    $("conversations").replaceChildren(...list.map((c) => {
      const li = el("li");
      const head = el("div", "who");
      head.append(openLink(c.platform, c.chat_id, c.thread_id),
                  el("span", "note", ` · ${c.turns} turn${c.turns === 1 ? "" : "s"} · ${when(c.last_activity)}`));
      li.append(head);
      for (const m of c.last_messages) li.append(el("div", "said", `${m.role === "user" ? "person" : "bot"}: ${m.text}`));
      return li;
    }));
    empty("conversations", list.length === 0);
  }
  function renderReplicas(r) {
    $("replicas").replaceChildren(...r.list.map((x) => {
      const li = el("li");
      li.append(el("span", "who", x.id), " ", badge(x.alive ? "alive" : "gone", x.alive ? "connected" : "disconnected"));
      const chats = x.chats.map((c) => where(c.platform, c.chat_id, c.thread_id)).join(", ");
      li.append(el("div", "said", chats ? `holds ${chats}` : (r.shared ? "holds no chat" : "alone (no coordination.url)")));
      return li;
    }));
  }
  function renderSchedules(list) {
    fill("schedules", list.map((s) => [s.name, s.when, where(s.platform, s.chat, s.thread), when(s.next_run)]));
  }
  function render(state) {
    received = Date.now() / 1000;
    renderPlatforms(state.platforms);
    renderInFlight(state.in_flight);
    renderPairing(state.pairing);
    renderConversations(state.conversations);
    renderReplicas(state.replicas);
    renderSchedules(state.schedules);
    $("config").textContent = JSON.stringify(state.config, null, 2);
    $("errors").hidden = state.errors.length === 0;
    $("errors").textContent = state.errors.length ? `Could not read: ${state.errors.join(", ")}` : "";
  }
  async function openChat(platform, chat, thread) {
    const path = `/ui/api/chats/${encodeURIComponent(platform)}/${encodeURIComponent(chat)}` +
      (thread ? `?thread=${encodeURIComponent(thread)}` : "");
    const r = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
    const body = await r.json().catch(() => null);
    $("chat-view").hidden = false;
    $("chat-title").textContent = `Conversation ${where(platform, chat, thread)}`;
    if (!r.ok || !body) {
      $("chat-messages").replaceChildren(el("li", "error", (body && body.error && body.error.message) || `failed (${r.status})`));
      return;
    }
    $("chat-messages").replaceChildren(...body.messages.map((m) => {
      const li = el("li", m.role);
      li.append(el("span", "role", m.role + (m.tools.length ? ` → ${m.tools.join(", ")}` : "")), m.text);
      return li;
    }));
    $("chat-view").scrollIntoView({ block: "nearest" });
  }
  function live(state, text) { const l = $("live"); l.dataset.state = state; l.textContent = text; }

  document.addEventListener("DOMContentLoaded", () => {
    $("chat-close").addEventListener("click", () => { $("chat-view").hidden = true; });
    const source = new EventSource("/ui/api/state/events");
    source.addEventListener("state", (e) => { render(JSON.parse(e.data)); live("live", "live"); });
    source.addEventListener("open", () => live("live", "live"));
    source.addEventListener("error", () => live("lost", "reconnecting…"));
    setInterval(tick, 1000);
  });
})();
