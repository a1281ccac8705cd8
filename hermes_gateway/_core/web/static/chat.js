/* The web chat: the feed (SSE) draws each reply message as it grows; Send, Stop, and the stored history. */
"use strict";
(() => {
  const log = document.getElementById("log");
  const form = document.getElementById("composer");
  const input = document.getElementById("text");
  const stopButton = document.getElementById("stop");
  const bubbles = new Map();  // message id -> its element

  function scroll() { log.scrollTop = log.scrollHeight; }

  function bubble(role, id) {
    const node = Console.el("div", "msg " + role);
    if (id) { node.dataset.id = id; bubbles.set(id, node); }
    log.appendChild(node);
    return node;
  }

  function drawText(node, text, final) {
    node.replaceChildren(Markdown.render(text));
    node.classList.toggle("streaming", !final);
    node.dataset.final = final ? "1" : "0";
  }

  function busy(on) {
    stopButton.hidden = !on;
    document.body.classList.toggle("busy", on);
  }

  function onEvent(event) {
    let e;
    try { e = JSON.parse(event.data); } catch (err) { return; }
    if (e.type === "text") {
      const node = bubbles.get(e.id) || bubble("bot", e.id);
      drawText(node, e.text, e.final);
    } else if (e.type === "media") {
      const node = bubble("bot media", e.id);
      if (e.kind === "image") {
        const img = document.createElement("img");
        img.src = e.url;  // a URL the server made; never model text
        img.alt = e.caption || e.filename || "image";
        node.appendChild(img);
      } else {
        const a = Console.el("a", "file", "📎 " + (e.filename || "file"));
        a.href = e.url;
        a.setAttribute("download", e.filename || "file");
        node.appendChild(a);
      }
      if (e.caption) node.appendChild(Console.el("div", "caption", e.caption));
    } else if (e.type === "busy") {
      busy(true);
    } else if (e.type === "idle") {
      busy(false);
    }
    scroll();
  }

  async function start() {
    const history = await Console.getJSON("/ui/api/chat/history");
    for (const m of history.messages) drawText(bubble(m.role === "user" ? "user" : "bot"), m.text, true);
    busy(history.busy);
    scroll();
    const feed = new EventSource("/ui/api/chat/events");
    feed.onmessage = onEvent;
    /* Ready once the server has the feed open: a message sent before could be answered unseen. */
    feed.onopen = () => { document.body.dataset.ready = "1"; };
  }

  async function send() {
    const text = input.value.trim();
    if (!text || document.body.dataset.ready !== "1") return;
    input.value = "";
    const mine = bubble("user");
    mine.textContent = text;
    scroll();
    const r = await Console.post("/ui/api/chat/send", { text });
    if (r.status >= 400) {
      const why = r.body && r.body.error ? r.body.error.message : "not sent (" + r.status + ")";
      mine.appendChild(Console.el("div", "error", why));
    }
  }

  form.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  stopButton.addEventListener("click", () => Console.post("/ui/api/chat/stop"));
  start();
})();
