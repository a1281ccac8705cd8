/* The console's shared script: the session (CSRF token) and JSON calls that carry it. No framework. */
"use strict";
const Console = (() => {
  let session = null;
  async function load() {
    if (session) return session;
    const r = await fetch("/ui/api/session", { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (r.status === 401) { location.href = "/ui/login"; throw new Error("signed out"); }
    session = await r.json();
    return session;
  }
  /* POST JSON with the CSRF header; resolves to {status, body}. */
  async function post(path, body) {
    const s = await load();
    const r = await fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": s.csrf },
      body: JSON.stringify(body || {}),
    });
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (r.status === 401) location.href = "/ui/login";
    return { status: r.status, body: data };
  }
  /* POST a form (files) with the CSRF header; the browser sets the multipart boundary. */
  async function postForm(path, form) {
    const s = await load();
    const r = await fetch(path, {
      method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": s.csrf }, body: form,
    });
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (r.status === 401) location.href = "/ui/login";
    return { status: r.status, body: data };
  }
  async function getJSON(path) {
    const r = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (r.status === 401) { location.href = "/ui/login"; throw new Error("signed out"); }
    return r.json();
  }
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  document.addEventListener("DOMContentLoaded", async () => {
    const out = document.getElementById("signout");
    if (!out) return;
    const s = await load();
    if (s.role === "user") {  /* signed in with an API key: the dashboard is the operator's (403) */
      document.querySelectorAll('nav a[href="/ui/dashboard"]').forEach((a) => { a.hidden = true; });
    }
    if (s.can_sign_out) {
      out.hidden = false;
      out.addEventListener("click", async () => { await post("/ui/logout"); location.href = "/ui/login"; });
    }
  });
  return { load, post, postForm, getJSON, el };
})();
